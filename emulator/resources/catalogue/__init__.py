"""The catalogue: data (locations, datacenters, server types, images, prices) and handlers."""
