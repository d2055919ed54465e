"""The serve Files API store: server-made names, quota, expiry, and a process killed mid-upload:
files written before survive whole, the half-written upload never appears. (HTTP-level hostile
uses: ``test_serve_store_hostile.py``.)"""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluators.serve.file_meta import record_charge
from evaluators.serve.files_store import FileStore, StoreError, StoreOptions

ROOT = Path(__file__).resolve().parents[1]


def test_put_get_list_delete_with_server_made_names(tmp_path):
    store = FileStore(tmp_path)
    r = store.put(b"RIFF1234", "audio/wav", "../../etc/passwd")
    assert r["name"].startswith("files/") and "passwd" not in r["name"] and r["sizeBytes"] == "8"
    file_id = r["name"].split("/")[1]
    assert store.data_path(file_id).read_bytes() == b"RIFF1234"
    assert [x["name"] for x in store.list()] == [r["name"]]
    assert store.public(store.get(file_id), "http://h/v1beta/")["uri"] == f"http://h/v1beta/{r['name']}"
    store.delete(file_id)
    with pytest.raises(StoreError) as e:
        store.get(file_id)
    assert e.value.status == 404
    with pytest.raises(StoreError):
        store.get("../secrets")


def test_resumable_chunks_must_follow_in_order(tmp_path):
    store = FileStore(tmp_path)
    upload = store.start_upload(6, "audio/wav", None)
    assert store.append(upload, 0, b"abc") == 3
    with pytest.raises(StoreError, match="does not match"):
        store.append(upload, 0, b"abc")
    store.append(upload, 3, b"def")
    assert store.data_path(store.finish(upload)["name"].split("/")[1]).read_bytes() == b"abcdef"


def test_quota_and_file_limit_answer_413(tmp_path):
    each = 6 + record_charge("audio/wav", None)  # a file counts its bytes and its record
    store = FileStore(tmp_path, StoreOptions(quota_bytes=2 * each, max_file_bytes=8))
    with pytest.raises(StoreError, match="limit of 8 bytes") as e:
        store.put(b"x" * 9, "audio/wav", None)
    assert e.value.status == 413
    store.put(b"x" * 6, "audio/wav", None)
    store.put(b"x" * 6, "audio/wav", None)
    with pytest.raises(StoreError, match=f"quota of {2 * each} bytes"):
        store.put(b"x" * 6, "audio/wav", None)
    assert store.used_bytes() == 2 * each and len(store.list()) == 2


def test_files_expire(tmp_path):
    store = FileStore(tmp_path, StoreOptions(ttl_s=0.05))
    file_id = store.put(b"abc", "audio/wav", None)["name"].split("/")[1]
    time.sleep(0.1)
    with pytest.raises(StoreError, match="expired"):
        store.get(file_id)
    assert store.list() == [] and store.used_bytes() == 0


_KILLED_MID_UPLOAD = """
import os, signal, sys
from evaluators.serve.files_store import FileStore
store = FileStore(sys.argv[1])
for i in range(3):
    print(store.put(bytes([i]) * 1000, "audio/wav", None)["name"], flush=True)
upload = store.start_upload(4000, "audio/wav", None)
store.append(upload, 0, b"z" * 2000)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_kill_mid_upload_keeps_earlier_files_whole_and_shows_no_partial_one(tmp_path):
    done = subprocess.run([sys.executable, "-c", _KILLED_MID_UPLOAD, str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    names = done.stdout.split()
    store = FileStore(tmp_path)  # the restart
    assert [r["name"] for r in store.list()] == sorted(names)
    for i, name in enumerate(names):
        assert store.data_path(name.split("/")[1]).read_bytes() == bytes([i]) * 1000
    assert list((tmp_path / "uploads").iterdir()) == []  # the half-written upload is gone
    assert store.used_bytes() == 3000 + 3 * record_charge("audio/wav", None)


def test_bytes_without_a_resource_are_no_file(tmp_path):
    FileStore(tmp_path).close()  # one store per folder: the first lets go before the restart
    (tmp_path / "files" / "abc123.bin").write_bytes(b"orphan")  # killed between rename and resource
    (tmp_path / "files" / "def456.json.tmp").write_bytes(b"{")
    store = FileStore(tmp_path)
    assert store.list() == [] and list((tmp_path / "files").iterdir()) == []


@pytest.mark.parametrize("mime,name", [("audio/wav", None), ("audio/wav", "\U0001F600" * 512),
                                       ("audio/" + "x" * 64 + "; codecs=" + "y" * 40, "\\\"" * 256)])
def test_the_counted_record_bounds_the_record_written(tmp_path, mime, name):
    """A file counts its bytes and at least the bytes of its record, whatever its free-text fields."""
    store = FileStore(tmp_path)
    r = store.put(b"x" * 12345, mime, name)
    written = (tmp_path / "files" / f"{r['name'].split('/')[1]}.json").stat().st_size
    counted = record_charge(r["mimeType"], name)
    assert written <= counted and store.used_bytes() == 12345 + counted
    assert (r.get("displayName"), r["mimeType"]) == (name, mime)
