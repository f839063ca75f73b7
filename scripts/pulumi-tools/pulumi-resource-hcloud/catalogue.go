package main

// The API's catalogue (server types, locations, datacenters, images by architecture), read
// once per plugin process: Check validates every server against it, and a stack may declare
// many servers of the same type.

import (
	"context"
	"slices"
	"strconv"
	"sync"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

type catalogue struct {
	c *hcloud.Client

	mu          sync.Mutex
	serverTypes []*hcloud.ServerType
	locations   []*hcloud.Location
	datacenters []*hcloud.Datacenter
	images      map[string]*hcloud.Image // "name|arch" -> image, nil when there is none
}

func newCatalogue(c *hcloud.Client) *catalogue {
	return &catalogue{c: c, images: map[string]*hcloud.Image{}}
}

func matches(id int64, name, idOrName string) bool {
	return name == idOrName || strconv.FormatInt(id, 10) == idOrName
}

func (cat *catalogue) allServerTypes(ctx context.Context) ([]*hcloud.ServerType, error) {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	if cat.serverTypes == nil {
		all, err := cat.c.ServerType.All(ctx)
		if err != nil {
			return nil, err
		}
		cat.serverTypes = all
	}
	return cat.serverTypes, nil
}

// serverType finds a server type by name or ID; nil when there is none.
func (cat *catalogue) serverType(ctx context.Context, idOrName string) (*hcloud.ServerType, error) {
	all, err := cat.allServerTypes(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if matches(t.ID, t.Name, idOrName) {
			return t, nil
		}
	}
	return nil, nil
}

func (cat *catalogue) serverTypeNames(ctx context.Context) []string {
	all, _ := cat.allServerTypes(ctx)
	names := make([]string, 0, len(all))
	for _, t := range all {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

func (cat *catalogue) allLocations(ctx context.Context) ([]*hcloud.Location, error) {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	if cat.locations == nil {
		all, err := cat.c.Location.All(ctx)
		if err != nil {
			return nil, err
		}
		cat.locations = all
	}
	return cat.locations, nil
}

// location finds a location by name or ID; nil when there is none.
func (cat *catalogue) location(ctx context.Context, idOrName string) (*hcloud.Location, error) {
	all, err := cat.allLocations(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range all {
		if matches(l.ID, l.Name, idOrName) {
			return l, nil
		}
	}
	return nil, nil
}

func (cat *catalogue) locationNames(ctx context.Context) []string {
	all, _ := cat.allLocations(ctx)
	names := make([]string, 0, len(all))
	for _, l := range all {
		names = append(names, l.Name)
	}
	slices.Sort(names)
	return names
}

func (cat *catalogue) allDatacenters(ctx context.Context) ([]*hcloud.Datacenter, error) {
	cat.mu.Lock()
	defer cat.mu.Unlock()
	if cat.datacenters == nil {
		all, err := cat.c.Datacenter.All(ctx)
		if err != nil {
			return nil, err
		}
		cat.datacenters = all
	}
	return cat.datacenters, nil
}

// datacenter finds a datacenter by name or ID; nil when there is none.
func (cat *catalogue) datacenter(ctx context.Context, idOrName string) (*hcloud.Datacenter, error) {
	all, err := cat.allDatacenters(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range all {
		if matches(d.ID, d.Name, idOrName) {
			return d, nil
		}
	}
	return nil, nil
}

// datacenterOf names the datacenter of a location when the location has exactly one (as every
// Hetzner location has today); "" otherwise. hcloud-go v2 no longer reads a server's datacenter.
func (cat *catalogue) datacenterOf(ctx context.Context, location string) string {
	all, err := cat.allDatacenters(ctx)
	if err != nil {
		return ""
	}
	found := ""
	for _, d := range all {
		if d.Location != nil && d.Location.Name == location {
			if found != "" {
				return ""
			}
			found = d.Name
		}
	}
	return found
}

// image resolves an image name or ID for an architecture, as the terraform provider does;
// nil when there is none.
func (cat *catalogue) image(ctx context.Context, idOrName string, arch hcloud.Architecture) (*hcloud.Image, error) {
	key := idOrName + "|" + string(arch)
	cat.mu.Lock()
	img, ok := cat.images[key]
	cat.mu.Unlock()
	if ok {
		return img, nil
	}
	img, _, err := cat.c.Image.GetForArchitecture(ctx, idOrName, arch)
	if err != nil {
		return nil, err
	}
	cat.mu.Lock()
	cat.images[key] = img
	cat.mu.Unlock()
	return img, nil
}
