"""The HTTP face of the server: the app, its endpoints, bodies, keys, admission, readiness and serving."""
