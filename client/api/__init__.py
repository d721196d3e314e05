"""The HTTP the client speaks: each route of the server as an operation (operations.py, calls.py), the one
module that sends HTTP (transport.py) with its retry rules (retries.py) and a dropped stream's resumption
(resumption.py), the error tree (errors.py) and the typed bodies (wire.py). `Client` and `AsyncClient`
(library.py, async_library.py) sit above it."""
