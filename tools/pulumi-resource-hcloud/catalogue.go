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

	serverTypes list[hcloud.ServerType]
	locations   list[hcloud.Location]
	datacenters list[hcloud.Datacenter]

	mu     sync.Mutex
	images map[string]*hcloud.Image // "name|arch" -> image, nil when there is none
}

func newCatalogue(c *hcloud.Client) *catalogue {
	return &catalogue{
		c: c,
		serverTypes: list[hcloud.ServerType]{load: c.ServerType.All,
			key: func(t *hcloud.ServerType) (int64, string) { return t.ID, t.Name }},
		locations: list[hcloud.Location]{load: c.Location.All,
			key: func(l *hcloud.Location) (int64, string) { return l.ID, l.Name }},
		datacenters: list[hcloud.Datacenter]{load: c.Datacenter.All,
			key: func(d *hcloud.Datacenter) (int64, string) { return d.ID, d.Name }},
		images: map[string]*hcloud.Image{},
	}
}

func matches(id int64, name, idOrName string) bool {
	return name == idOrName || strconv.FormatInt(id, 10) == idOrName
}

// list is one of the catalogue's lists: read from the API when first asked for, then kept.
type list[T any] struct {
	mu    sync.Mutex
	items []*T
	load  func(context.Context) ([]*T, error)
	key   func(*T) (id int64, name string)
}

func (l *list[T]) all(ctx context.Context) ([]*T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.items == nil {
		all, err := l.load(ctx)
		if err != nil {
			return nil, err
		}
		l.items = all
	}
	return l.items, nil
}

// find finds an item by name or ID; nil when there is none.
func (l *list[T]) find(ctx context.Context, idOrName string) (*T, error) {
	all, err := l.all(ctx)
	if err != nil {
		return nil, err
	}
	for _, x := range all {
		if id, name := l.key(x); matches(id, name, idOrName) {
			return x, nil
		}
	}
	return nil, nil
}

// names lists the items' names, sorted (none when the list can't be read).
func (l *list[T]) names(ctx context.Context) []string {
	all, _ := l.all(ctx)
	names := make([]string, 0, len(all))
	for _, x := range all {
		_, name := l.key(x)
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// datacenterOf names the datacenter of a location when the location has exactly one (as every
// Hetzner location has today); "" otherwise. hcloud-go v2 no longer reads a server's datacenter.
func (cat *catalogue) datacenterOf(ctx context.Context, location string) string {
	all, err := cat.datacenters.all(ctx)
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
