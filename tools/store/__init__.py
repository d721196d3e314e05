"""Object storage for the projects' files: the store interface, a local tree, S3/R2, paths and upload."""
