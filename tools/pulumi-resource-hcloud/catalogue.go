package main

// The API's catalogue (server types, images by architecture), read once per plugin process:
// a stack may declare many servers of the same type, and each create and type change needs
// the type (its architecture, disk and per-location deprecation). Only Create, Update and the
// invokes read it: Check and Diff never call the API, as the official provider's plan does not.
// Datacenters are never read: GET /datacenters answers 410 Gone since 2026-10-01.

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

	mu     sync.Mutex
	images map[string]*hcloud.Image // "name|arch" -> image, nil when there is none
}

func newCatalogue(c *hcloud.Client) *catalogue {
	return &catalogue{
		c: c,
		serverTypes: list[hcloud.ServerType]{load: c.ServerType.All,
			key: func(t *hcloud.ServerType) (int64, string) { return t.ID, t.Name }},
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
