"""A bounded, thread-safe memo of recent answers: the least recently used goes first when it is full."""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

Key = TypeVar("Key")
Value = TypeVar("Value")


class Recent(Generic[Key, Value]):
    """At most `size` answers, by key."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[Key, Value] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Key) -> Value | None:
        """The answer kept for `key`, now the most recent, or None."""
        with self._lock:
            value = self._kept.get(key)
            if value is not None:
                self._kept.move_to_end(key)
            return value

    def get_or_make(self, key: Key, make: Callable[[], Value]) -> Value:
        """The answer kept for `key`, or `make()`'s, kept from now (two threads may both make it)."""
        value = self.get(key)
        if value is None:
            value = make()
            self.put(key, value)
        return value

    def put(self, key: Key, value: Value) -> None:
        """Keep `value` for `key`, dropping the least recent answer when full."""
        with self._lock:
            self._kept[key] = value
            self._kept.move_to_end(key)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)

    def __len__(self) -> int:
        return len(self._kept)
