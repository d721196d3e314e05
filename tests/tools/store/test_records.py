"""The server's records (get_record / put_record_if / delete_record) on the local tree and on S3
(moto on loopback): conditional writes, and a place of their own beside every project."""

import hashlib

import pytest

from reactstep.tools.errors import StaleFile
from reactstep.tools.store.objects import ObjectStore


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_a_record_is_written_only_while_absent_then_only_over_its_etag(store: ObjectStore) -> None:
    assert store.get_record("idem-a.json") is None
    etag = store.put_record_if("idem-a.json", b"first", None)
    assert (etag, store.get_record("idem-a.json")) == (md5(b"first"), (b"first", md5(b"first")))
    with pytest.raises(StaleFile):
        store.put_record_if("idem-a.json", b"second", None)
    with pytest.raises(StaleFile):
        store.put_record_if("idem-a.json", b"second", md5(b"other"))
    assert store.put_record_if("idem-a.json", b"second", etag) == md5(b"second")
    assert store.get_record("idem-a.json") == (b"second", md5(b"second"))
    store.delete_record("idem-a.json")
    store.delete_record("idem-a.json")  # a missing record is fine
    assert store.get_record("idem-a.json") is None


def test_records_are_in_no_project_and_outlive_a_deleted_one(store: ObjectStore) -> None:
    store.put("p1", "src/app.py", b"x = 1\n")
    store.put_record_if("idem-b.json", b"kept", None)
    assert [info.path for info in store.list("p1")] == ["src/app.py"]
    store.delete_project("p1")
    assert store.get_record("idem-b.json") == (b"kept", md5(b"kept"))


@pytest.mark.parametrize("name", ["", "../escape.json", "a/b.json", ".hidden", "x" * 129])
def test_a_record_name_is_one_plain_file_name(store: ObjectStore, name: str) -> None:
    with pytest.raises(ValueError, match="invalid index file name"):
        store.put_record_if(name, b"x", None)
