"""The Files API under hostile use, through HTTP: the quota counts everything the store keeps
(records, display names, uploads in progress), unfinished uploads expire and give their quota back,
upload ids are opaque (an unknown, finished or path-like id is a 404 with no server path), metadata
fields are typed (400 naming the field), and one server holds a folder. After every refusal the
other files are still there and the quota is unchanged."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from evaluators.serve.app import ServeOptions, create_app
from evaluators.serve.file_meta import MAX_DISPLAY_NAME, record_charge
from evaluators.serve.files_store import FileStore, StoreError, StoreOptions
from evaluators.serve.folder_lock import FolderBusy, FolderLock

ROOT = Path(__file__).resolve().parents[1]
UPLOAD = "/upload/v1beta/files"


def _app(folder: Path, **store):
    app = create_app({}, ServeOptions(folder=folder, store=StoreOptions(**store)))
    return TestClient(app), app.state.store


def _start(client, size=None, mime="audio/wav", meta=None, headers=None):
    h = {"X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start"}
    if size is not None:
        h["X-Goog-Upload-Header-Content-Length"] = str(size)
    if mime is not None:
        h["X-Goog-Upload-Header-Content-Type"] = mime
    h.update(headers or {})
    return client.post(UPLOAD, headers=h, content=json.dumps({"file": meta or {}}))


def _step(client, url, command, data=b"", offset=None):
    h = {"X-Goog-Upload-Command": command}
    if offset is not None:
        h["X-Goog-Upload-Offset"] = str(offset)
    return client.post(url, headers=h, content=data)


def _upload(client, data: bytes, name=None) -> dict:
    r = _start(client, len(data), meta={"displayName": name} if name else None)
    assert r.status_code == 200, r.text
    done = _step(client, r.headers["x-goog-upload-url"], "upload, finalize", data, 0)
    assert done.status_code == 200, done.text
    return done.json()["file"]


def _disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in (folder / "store").rglob("*") if p.is_file())


def _names(client) -> list[str]:
    return sorted(f["name"] for f in client.get("/v1beta/files").json().get("files", []))


def test_display_names_and_records_count_so_the_disk_never_outgrows_the_quota(tmp_path):
    quota = 20_000
    client, store = _app(tmp_path, quota_bytes=quota, max_file_bytes=4096)
    long_name = "名" * MAX_DISPLAY_NAME  # JSON-escaped to 6 bytes a character in the record
    kept, refused = [], None
    for _ in range(50):
        r = _start(client, 10, meta={"displayName": long_name})
        if r.status_code != 200:
            refused = r
            break
        kept.append(_step(client, r.headers["x-goog-upload-url"], "upload, finalize", b"0123456789", 0).json())
    assert refused is not None and refused.status_code == 413 and "quota" in refused.json()["error"]["message"]
    assert len(kept) == quota // (10 + record_charge("audio/wav", long_name))
    assert store.used_bytes() <= quota and _disk_bytes(tmp_path) <= store.used_bytes()
    assert len(_names(client)) == len(kept)


def test_an_announced_size_is_reserved_at_start_and_a_refusal_loses_nothing(tmp_path):
    client, store = _app(tmp_path, quota_bytes=11_000, max_file_bytes=10_000)
    first = _upload(client, b"a" * 1000)
    used = store.used_bytes()
    big = _start(client, 8000)
    assert big.status_code == 200 and store.used_bytes() == used + 8000 + record_charge("audio/wav", None)
    refused = _start(client, 1000)
    assert refused.status_code == 413 and "quota of 11000 bytes" in refused.json()["error"]["message"]
    assert store.used_bytes() == used + 8000 + record_charge("audio/wav", None)
    assert _names(client) == [first["name"]]
    assert client.get(f"/v1beta/{first['name']}").json()["sizeBytes"] == "1000"
    # cancelling gives the reservation back at once
    assert _step(client, big.headers["x-goog-upload-url"], "cancel").status_code == 200
    assert store.used_bytes() == used and _start(client, 1000).status_code == 200


def test_chunks_of_an_unannounced_upload_count_as_they_arrive(tmp_path):
    client, store = _app(tmp_path, quota_bytes=3000, max_file_bytes=3000)
    url = _start(client).headers["x-goog-upload-url"]
    offset = 0
    while True:
        r = _step(client, url, "upload", b"z" * 500, offset)
        if r.status_code != 200:
            break
        offset += 500
    assert r.status_code == 413 and offset == (3000 - record_charge("audio/wav", None)) // 500 * 500
    assert store.used_bytes() <= 3000 and _disk_bytes(tmp_path) <= store.used_bytes()
    assert _step(client, url, "query").headers["x-goog-upload-size-received"] == str(offset)


def test_a_chunk_past_the_announced_size_is_refused(tmp_path):
    client, store = _app(tmp_path)
    url = _start(client, 4).headers["x-goog-upload-url"]
    r = _step(client, url, "upload", b"12345", 0)
    assert r.status_code == 400 and "4 were announced" in r.json()["error"]["message"]
    short = _step(client, url, "upload, finalize", b"12", 0)
    assert short.status_code == 400 and "2 bytes; 4 were announced" in short.json()["error"]["message"]
    done = _step(client, url, "upload, finalize", b"34", 2)  # the upload stayed open: resume and finish
    assert done.status_code == 200 and done.json()["file"]["sizeBytes"] == "4"


def test_abandoned_uploads_expire_on_the_timer_and_give_their_quota_back(tmp_path):
    client, store = _app(tmp_path, quota_bytes=6000, max_file_bytes=6000, upload_ttl_s=0.4)
    kept = _upload(client, b"k" * 100)
    files_only = store.used_bytes()
    urls = [_start(client, 2000).headers["x-goog-upload-url"] for _ in range(2)]
    _step(client, urls[0], "upload", b"x" * 700, 0)
    assert _start(client, 2000).status_code == 413
    client.delete(f"/v1beta/{kept['name']}")  # every file deleted: the uploads still hold the quota
    assert store.used_bytes() > 4000
    time.sleep(0.8)  # no request in between: only the timer sweeps
    assert store.used_bytes() == files_only - (100 + record_charge("audio/wav", None))  # == 0
    assert list((tmp_path / "store" / "uploads").iterdir()) == []
    gone = _step(client, urls[0], "query")
    assert gone.status_code == 404 and "expired" in gone.json()["error"]["message"]
    assert _upload(client, b"n" * 5000)["sizeBytes"] == "5000"


def test_an_expired_upload_is_gone_even_before_a_sweep(tmp_path):
    store = FileStore(tmp_path, StoreOptions(upload_ttl_s=0.2, ttl_s=3600))
    store._stop_sweeper.set()  # the lazy path alone
    upload = store.start_upload(10, "audio/wav", None)
    time.sleep(0.3)
    with pytest.raises(StoreError) as e:
        store.append(upload, 0, b"0123456789")
    assert e.value.status == 404
    assert store.used_bytes() > 0  # counted until a sweep ...
    store.put(b"abc", "audio/wav", None)  # ... which a request needing room does when it does not fit
    assert store.list() and store.used_bytes() == 3 + record_charge("audio/wav", None)
    store.close()


@pytest.mark.parametrize("upload_id", ["", "nope", "../files/x", "..%2Ffiles%2Fx", "../../../../etc/passwd",
                                       "A" * 65, "Aa1_-" * 6 + "zz"])
@pytest.mark.parametrize("command", ["query", "upload", "upload, finalize", "finalize", "cancel"])
def test_unknown_or_path_like_upload_ids_are_404_without_a_server_path(tmp_path, upload_id, command):
    client, store = _app(tmp_path)
    kept = _upload(client, b"keep me")
    used = store.used_bytes()
    r = _step(client, f"{UPLOAD}?upload_id={upload_id}&upload_protocol=resumable", command, b"xx", 0)
    assert r.status_code == 404, r.text
    assert str(tmp_path) not in r.text and "/uploads" not in r.text and ".part" not in r.text
    assert "no upload in progress" in r.json()["error"]["message"]
    assert _names(client) == [kept["name"]] and store.used_bytes() == used
    assert store.data_path(kept["name"].split("/")[1]).read_bytes() == b"keep me"


def test_a_finished_upload_id_is_404(tmp_path):
    client, _ = _app(tmp_path)
    url = _start(client, 3).headers["x-goog-upload-url"]
    assert _step(client, url, "upload, finalize", b"abc", 0).status_code == 200
    for command in ("query", "finalize", "upload"):
        r = _step(client, url, command, b"d", 3)
        assert r.status_code == 404 and "finished" in r.json()["error"]["message"]


def test_upload_id_pointing_at_a_real_file_reaches_nothing(tmp_path):
    client, store = _app(tmp_path)
    file_id = _upload(client, b"precious")["name"].split("/")[1]
    for upload_id in (f"../files/{file_id}", f"../files/{file_id}.bin", file_id):
        r = _step(client, f"{UPLOAD}?upload_id={upload_id}", "upload, finalize", b"overwrite", 0)
        assert r.status_code == 404
    assert store.data_path(file_id).read_bytes() == b"precious"


BAD_META = [
    ({"mimeType": 123}, 400, "file.mimeType must be a string"),
    ({"mimeType": ["audio/wav"]}, 400, "file.mimeType must be a string"),
    ({"mimeType": {"a": 1}}, 400, "file.mimeType must be a string"),
    ({"mimeType": "../../etc/passwd"}, 400, "file.mimeType must be a media type"),
    ({"mimeType": "audio/" + "x" * 200}, 400, "file.mimeType must be a media type"),
    ({"sizeBytes": [1, 2]}, 400, "file.sizeBytes must be a whole number"),
    ({"sizeBytes": {"n": 1}}, 400, "file.sizeBytes must be a whole number"),
    ({"sizeBytes": True}, 400, "file.sizeBytes must be a whole number"),
    ({"sizeBytes": 1.5}, 400, "file.sizeBytes must be a whole number"),
    ({"sizeBytes": "12abc"}, 400, "file.sizeBytes must be a whole number"),
    ({"sizeBytes": -5}, 400, "file.sizeBytes must be >= 0"),
    ({"sizeBytes": 10 ** 30}, 413, "file.sizeBytes"),
    ({"displayName": 7}, 400, "file.displayName must be a string"),
    ({"displayName": "n" * (MAX_DISPLAY_NAME + 1)}, 400, "file.displayName is 513 characters"),
    ({"displayName": "a\x00b"}, 400, "file.displayName must not hold control characters"),
]


@pytest.mark.parametrize("meta,status,words", BAD_META)
def test_mistyped_metadata_is_refused_naming_the_field_and_nothing_is_lost(tmp_path, meta, status, words):
    client, store = _app(tmp_path)
    kept = _upload(client, b"keep")
    used = store.used_bytes()
    r = _start(client, None, mime=None, meta=meta)
    assert r.status_code == status and words in r.json()["error"]["message"], r.text
    boundary = "b0undary"
    body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n{json.dumps({'file': meta})}\r\n"
            f"--{boundary}\r\nContent-Type: audio/wav\r\n\r\nRIFFdata\r\n--{boundary}--\r\n").encode()
    multi = client.post(UPLOAD, headers={"X-Goog-Upload-Protocol": "multipart",
                                         "Content-Type": f"multipart/related; boundary={boundary}"}, content=body)
    assert multi.status_code == status and words in multi.json()["error"]["message"], multi.text
    assert _names(client) == [kept["name"]] and store.used_bytes() == used


@pytest.mark.parametrize("headers,words", [
    ({"X-Goog-Upload-Header-Content-Length": "abc"}, "X-Goog-Upload-Header-Content-Length must be a whole number"),
    ({"X-Goog-Upload-Header-Content-Length": "-1"}, "X-Goog-Upload-Header-Content-Length must be a whole number"),
    ({"X-Goog-Upload-Header-Content-Type": "not a type"}, "X-Goog-Upload-Header-Content-Type must be a media type"),
])
def test_mistyped_upload_headers_are_400_naming_the_header(tmp_path, headers, words):
    client, store = _app(tmp_path)
    r = _start(client, None, mime=None, headers=headers)
    assert r.status_code == 400 and words in r.json()["error"]["message"], r.text
    assert store.used_bytes() == 0


def test_a_bad_offset_header_and_a_bad_media_content_type_are_400(tmp_path):
    client, _ = _app(tmp_path)
    url = _start(client, 2).headers["x-goog-upload-url"]
    r = client.post(url, headers={"X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "x1"}, content=b"ab")
    assert r.status_code == 400 and "X-Goog-Upload-Offset" in r.json()["error"]["message"]
    media = client.post(UPLOAD, headers={"X-Goog-Upload-Protocol": "media", "Content-Type": "??"}, content=b"RIFF")
    assert media.status_code == 400 and "Content-Type must be a media type" in media.json()["error"]["message"]


def test_a_stored_record_with_a_mistyped_field_is_no_file_after_a_restart(tmp_path):
    store = FileStore(tmp_path)
    good = store.put(b"good", "audio/wav", None)["name"].split("/")[1]
    bad = store.put(b"bad!", "audio/wav", None)["name"].split("/")[1]
    store.close()
    record = json.loads((tmp_path / "files" / f"{bad}.json").read_text())
    record["mimeType"] = 123  # written by an older server that took any JSON
    (tmp_path / "files" / f"{bad}.json").write_text(json.dumps(record))
    store = FileStore(tmp_path)
    assert [r["name"] for r in store.list()] == [f"files/{good}"]
    assert store.used_bytes() == 4 + record_charge("audio/wav", None)
    assert not (tmp_path / "files" / f"{bad}.bin").exists()
    store.close()


def test_a_busy_upload_answers_409(tmp_path):
    store = FileStore(tmp_path)
    upload = store.start_upload(4, "audio/wav", None)
    busy = store._table.find(upload).busy
    busy.acquire()
    with pytest.raises(StoreError) as e:
        store.append(upload, 0, b"abcd")
    assert e.value.status == 409
    busy.release()
    assert store.append(upload, 0, b"abcd") == 4
    store.close()


def test_a_second_store_on_a_held_folder_stops_and_touches_nothing(tmp_path):
    client, store = _app(tmp_path / "srv")
    kept = _upload(client, b"kept")
    url = _start(client, 6).headers["x-goog-upload-url"]
    assert _step(client, url, "upload", b"abc", 0).status_code == 200
    parts = sorted((tmp_path / "srv" / "store" / "uploads").iterdir())
    with pytest.raises(FolderBusy) as e:
        create_app({}, ServeOptions(folder=tmp_path / "srv"))
    message = str(e.value)
    assert "\n" not in message and str((tmp_path / "srv").resolve()) in message and "in use" in message
    assert sorted((tmp_path / "srv" / "store" / "uploads").iterdir()) == parts  # the upload in progress lives
    assert _step(client, url, "upload, finalize", b"def", 3).json()["file"]["sizeBytes"] == "6"
    assert len(_names(client)) == 2 and kept["name"] in _names(client)
    store.close()
    create_app({}, ServeOptions(folder=tmp_path / "srv")).state.store.close()  # released: the next one starts


_HOLD = """
import sys, time
from evaluators.serve.folder_lock import FolderLock
lock = FolderLock.acquire(sys.argv[1])
print("held", flush=True)
time.sleep(120)
"""


def test_a_second_serve_on_the_same_folder_stops_with_one_line_before_touching_it(tmp_path):
    folder = tmp_path / "srv"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        (folder / "store" / "uploads").mkdir(parents=True)
        part = folder / "store" / "uploads" / "0123abcd.part"
        part.write_bytes(b"the first server's upload in progress")
        done = subprocess.run([sys.executable, "-m", "evaluators.cli", "serve", "--base", "tiny", "--folder",
                               str(folder), "--port", "1"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and str(folder.resolve()) in lines[0] and f"pid {holder.pid}" in lines[0], done.stderr
        assert part.read_bytes() == b"the first server's upload in progress"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with FolderLock.acquire(folder):  # a lock left by a killed holder never blocks a restart
        pass
    assert os.path.exists(folder / "serve.lock")
