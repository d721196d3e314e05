"""Pick the object store back-end once, from plain values: a local tree (the default) or S3/R2."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from reactstep.tools.store.local import LocalStore
from reactstep.tools.store.objects import ObjectStore
from reactstep.tools.store.s3_clients import S3Config


@dataclass(frozen=True)
class StoreConfig:
    """Which back-end, and where: `root` for the local tree, `s3` for a bucket."""

    backend: Literal["local", "s3"] = "local"
    root: Path = Path(".reactstep/objects")
    s3: S3Config = field(default_factory=S3Config)


def open_store(config: StoreConfig) -> ObjectStore:
    """The store the config names: "local" (the default) or "s3"."""
    if config.backend == "s3":
        from reactstep.tools.store.s3 import make_s3_store

        return make_s3_store(config.s3)
    return LocalStore(config.root)
