"""The catalogue: data (locations, server types, images, prices) and handlers."""
