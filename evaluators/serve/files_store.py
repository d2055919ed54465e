"""The Files API store of ``omnijudge serve``: uploaded audio kept in a server folder under names
the server makes, with a byte quota and an expiry (``docs/serve.md#files``).

Layout under ``root``: ``files/<id>.bin`` (the bytes) and ``files/<id>.json`` (the resource, the
Gemini ``File`` JSON); ``uploads/<random>.part`` (the bytes of a resumable upload in progress, whose
state lives in memory, :mod:`evaluators.serve.upload_table`). A file exists once its ``.json`` does:
the bytes are fsynced and renamed into place first, then the resource is written through a fsynced
temporary file and a rename, so a kill at any point leaves either no file or a whole one.

One store per folder: the folder's lock (:mod:`evaluators.serve.folder_lock`) is held before the
store reads or cleans anything, and for its whole life. The quota counts everything the store keeps:
each file's bytes and record (display name and media type included), each upload's record and the
larger of its announced size (reserved when it starts) and the bytes received. An upload idle past
``upload_ttl_s`` expires and gives its quota back; expired files and uploads are swept on every
request that needs room, on listing, and by a timer.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from evaluators.rows_file import replace_file
from evaluators.serve import file_meta
from evaluators.serve.folder_lock import FolderLock
from evaluators.serve.errors import StoreError
from evaluators.serve.upload_table import Upload, UploadTable, start_sweeper

__all__ = ["FileStore", "StoreError", "StoreOptions"]

_ID = re.compile(r"\A[a-z0-9]{1,40}\Z")


@dataclass(frozen=True)
class StoreOptions:
    """``quota_bytes``: most bytes kept (files, their records and uploads in progress);
    ``max_file_bytes``: the largest file; ``ttl_s``: seconds a file lives after upload (Gemini keeps
    files 48 h); ``upload_ttl_s``: seconds an upload in progress may stay idle before it expires."""

    quota_bytes: int = 2 << 30
    max_file_bytes: int = 256 << 20
    ttl_s: float = 48 * 3600
    upload_ttl_s: float = 3600

    def __post_init__(self):
        for name in ("quota_bytes", "max_file_bytes", "ttl_s", "upload_ttl_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"files store {name} must be a number > 0, got {value!r}")

    @property
    def sweep_interval_s(self) -> float:
        """How often the timer sweeps: a quarter of the shorter lifetime, between 0.05 s and 60 s."""
        return min(60.0, max(0.05, min(self.ttl_s, self.upload_ttl_s) / 4))


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _disk_error(e: OSError) -> StoreError:
    return StoreError(507, f"the server could not store the file: {e.strerror or type(e).__name__}")


def _unknown_file(file_id) -> StoreError:
    shown = f"files/{file_id}" if isinstance(file_id, str) and _ID.match(file_id) else "with that name"
    return StoreError(404, f"no file {shown} (never uploaded, deleted or expired)")


def _file_charge(resource: dict) -> int:
    """Bytes a kept file counts: its bytes and its record."""
    return int(resource["sizeBytes"]) + file_meta.record_charge(resource["mimeType"], resource.get("displayName"))


class FileStore:
    """Uploaded files of one server folder (thread-safe). ``folder_lock``: the lock already held on
    ``root`` or a folder above it (the store keeps and releases it); None: the store locks ``root``."""

    def __init__(self, root: str | Path, options: StoreOptions = StoreOptions(), folder_lock: FolderLock | None = None):
        self.root = Path(root)
        self.options = options
        self._folder_lock = folder_lock if folder_lock is not None else FolderLock.acquire(self.root)
        if not self._folder_lock.covers(self.root):
            raise ValueError(f"file store {self.root}: the folder lock given holds {self._folder_lock.folder}")
        self.files = self.root / "files"
        self.uploads = self.root / "uploads"
        self.files.mkdir(parents=True, exist_ok=True)
        self.uploads.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._records: dict[str, dict] = {}
        self._charges: dict[str, int] = {}
        self._table = UploadTable(options.upload_ttl_s)
        self._used = 0
        self._recover()
        self._stop_sweeper = start_sweeper(self, options.sweep_interval_s)

    def close(self) -> None:
        """Stop the sweeper and release the folder (idempotent); uploads in progress are dropped."""
        self._stop_sweeper.set()
        with self._lock:
            for upload_id in self._table.ids():
                self._drop_upload(upload_id)
        self._folder_lock.release()

    # ---- opening --------------------------------------------------------------------------------
    def _recover(self) -> None:
        """Remove what an earlier server left (the lock is held): uploads in progress, temporaries,
        bytes with no record, records that do not check out; then load the kept files."""
        for p in self.uploads.iterdir():
            if p.is_file():
                p.unlink(missing_ok=True)
        now = time.time()
        for p in sorted(self.files.glob("*.json")):
            resource = self._checked_record(p)
            if resource is None or resource["_expires"] <= now:
                p.unlink(missing_ok=True)
                continue
            self._records[p.stem] = resource
            self._charges[p.stem] = _file_charge(resource)
        for p in self.files.iterdir():
            if p.suffix == ".tmp" or (p.suffix == ".bin" and p.stem not in self._records):
                p.unlink(missing_ok=True)
        self._used = sum(self._charges.values())

    def _checked_record(self, path: Path) -> dict | None:
        """The resource at ``path`` if it is one this store wrote and its bytes are whole, else None."""
        try:
            resource = json.loads(path.read_text(encoding="utf-8"))
            ok = (isinstance(resource, dict) and _ID.match(path.stem) and resource.get("name") == f"files/{path.stem}"
                  and isinstance(resource.get("_expires"), (int, float))
                  and isinstance(resource.get("sizeBytes"), str) and resource["sizeBytes"].isdigit()
                  and (self.files / f"{path.stem}.bin").stat().st_size == int(resource["sizeBytes"]))
            if ok:
                file_meta.mime_type(resource.get("mimeType"))
                file_meta.display_name(resource.get("displayName"))
        except (OSError, ValueError):
            return None  # StoreError is a ValueError: a record with a bad field is no file
        return resource if ok else None

    # ---- files ----------------------------------------------------------------------------------
    def get(self, file_id) -> dict:
        """The ``File`` resource of ``files/<file_id>``; an unknown or expired id is a 404."""
        with self._lock:
            resource = self._records.get(file_id) if isinstance(file_id, str) else None
            if resource is None:
                raise _unknown_file(file_id)
            if resource["_expires"] <= time.time():
                self._drop_file(file_id)
                raise StoreError(404, f"file files/{file_id} has expired")
            return dict(resource)

    def data_path(self, file_id) -> Path:
        self.get(file_id)
        return self.files / f"{file_id}.bin"

    def list(self) -> list[dict]:
        self.sweep()
        with self._lock:
            return [dict(self._records[k]) for k in sorted(self._records)]

    def delete(self, file_id) -> None:
        with self._lock:
            if file_id not in self._records:
                raise _unknown_file(file_id)
            self._drop_file(file_id)

    def _drop_file(self, file_id: str) -> None:
        """Forget a file and remove it: the record first, so the file is gone even if the bytes linger."""
        del self._records[file_id]
        self._used -= self._charges.pop(file_id)
        (self.files / f"{file_id}.json").unlink(missing_ok=True)
        (self.files / f"{file_id}.bin").unlink(missing_ok=True)

    def sweep(self) -> int:
        """Delete expired files and drop expired uploads (their quota comes back); returns how many."""
        now, n = time.time(), 0
        with self._lock:
            for file_id in [k for k, r in self._records.items() if r["_expires"] <= now]:
                self._drop_file(file_id)
                n += 1
            for upload in self._table.expired():
                self._release_upload(upload)
                n += 1
        return n

    def used_bytes(self) -> int:
        """Bytes the quota counts now (files, their records, uploads in progress)."""
        with self._lock:
            return self._used

    @staticmethod
    def public(resource: dict, base_url: str) -> dict:
        """The resource as the API shows it: without the store's own keys, its ``uri`` the full
        address under ``base_url`` (the API version's root, ending with ``/``)."""
        out = {k: v for k, v in resource.items() if not k.startswith("_")}
        out["uri"] = f"{base_url}{resource['name']}"
        return out

    # ---- uploads --------------------------------------------------------------------------------
    def start_upload(self, size: int | None, mime_type, display_name) -> str:
        """Open a resumable upload of ``size`` bytes (None: not announced) and reserve its room;
        returns its opaque id."""
        mime = file_meta.mime_type(mime_type)
        name = file_meta.display_name(display_name)
        if size is not None:
            size = file_meta.size_bytes(size, self.options.max_file_bytes)
        record = file_meta.record_charge(mime, name)
        upload = Upload(part=self.uploads / f"{secrets.token_hex(16)}.part", declared=size, mime_type=mime,
                        display_name=name, record=record, charge=record + (size or 0))
        with self._lock:
            self._reserve(upload.charge)
            try:
                upload.part.touch(exist_ok=False)
            except OSError as e:
                self._used -= upload.charge
                raise _disk_error(e) from None
            return self._table.add(upload)

    def append(self, upload_id: str, offset: int, chunk: bytes) -> int:
        """Write ``chunk`` at ``offset`` (which must be the bytes received so far); returns that total."""
        with self._busy(upload_id) as upload:
            if offset != upload.received:
                raise StoreError(400, f"X-Goog-Upload-Offset {offset} does not match the {upload.received} bytes "
                                      "received")
            total = upload.received + len(chunk)
            if total > self.options.max_file_bytes:
                raise StoreError(413, f"file larger than the limit of {self.options.max_file_bytes} bytes")
            if upload.declared is not None and total > upload.declared:
                raise StoreError(400, f"the upload would hold {total} bytes; {upload.declared} were announced "
                                      "(X-Goog-Upload-Header-Content-Length)")
            with self._lock:
                self._check_held(upload_id, upload)
                extra = max(0, upload.record + total - upload.charge)
                self._reserve(extra)
                upload.charge += extra
            try:
                with upload.part.open("r+b") as f:
                    f.seek(upload.received)
                    f.write(chunk)
                    f.truncate()
            except OSError as e:
                raise _disk_error(e) from None
            upload.received = total
            upload.touched = time.monotonic()
            return total

    def received(self, upload_id: str) -> int:
        """Bytes received so far by an upload in progress (404: unknown, finished or expired)."""
        with self._lock:
            upload = self._table.find(upload_id)
            upload.touched = time.monotonic()
            return upload.received

    def cancel(self, upload_id: str) -> None:
        """Drop an upload in progress and give its quota back."""
        with self._busy(upload_id):
            with self._lock:
                self._drop_upload(upload_id)

    def finish(self, upload_id: str) -> dict:
        """Make the upload a file; returns its resource. A size short of the announced one is a 400
        and the upload stays open (the client may query and resume)."""
        with self._busy(upload_id) as upload:
            size = upload.received
            if upload.declared is not None and size != upload.declared:
                raise StoreError(400, f"upload finalized with {size} bytes; {upload.declared} were announced")
            try:
                return self._publish(upload_id, upload)
            except OSError as e:
                with self._lock:
                    self._drop_upload(upload_id)
                raise _disk_error(e) from None

    def put(self, data: bytes, mime_type, display_name) -> dict:
        """Store a whole file at once (multipart or media upload); returns its resource. A refused
        file leaves nothing behind."""
        if len(data) > self.options.max_file_bytes:
            raise StoreError(413, f"file larger than the limit of {self.options.max_file_bytes} bytes")
        upload_id = self.start_upload(len(data), mime_type, display_name)
        try:
            self.append(upload_id, 0, data)
            return self.finish(upload_id)
        finally:
            with self._lock:
                self._drop_upload(upload_id)

    # ---- accounting -----------------------------------------------------------------------------
    def _reserve(self, extra: int) -> None:
        """Count ``extra`` more bytes (under the lock), sweeping first when they do not fit; 413 if
        they still do not."""
        if self._used + extra > self.options.quota_bytes:
            self.sweep()
            if self._used + extra > self.options.quota_bytes:
                raise StoreError(413, f"the file store's quota of {self.options.quota_bytes} bytes is used up "
                                      f"({self._used} kept, {extra} more asked; files, their records and uploads "
                                      "in progress count); delete files first")
        self._used += extra

    @contextmanager
    def _busy(self, upload_id: str):
        """The upload of ``upload_id``, marked busy for one request (409 while another writes it)."""
        with self._lock:
            upload = self._table.find(upload_id)
        if not upload.busy.acquire(blocking=False):
            raise StoreError(409, "another request is writing this upload; wait for it, then query the offset")
        try:
            yield upload
        finally:
            upload.busy.release()

    def _check_held(self, upload_id: str, upload: Upload) -> None:
        if not self._table.holds(upload_id, upload):
            raise StoreError(404, "the upload expired while its chunk arrived; start it again")

    def _drop_upload(self, upload_id: str) -> None:
        upload = self._table.pop(upload_id)
        if upload is not None:
            self._release_upload(upload)

    def _release_upload(self, upload: Upload) -> None:
        self._used -= upload.charge
        upload.charge = 0
        upload.part.unlink(missing_ok=True)

    def _new_id(self) -> str:
        while True:
            file_id = secrets.token_hex(6)
            if file_id not in self._records and not (self.files / f"{file_id}.bin").exists():
                return file_id

    def _publish(self, upload_id: str, upload: Upload) -> dict:
        """Move the upload's bytes into place, write the record, and move its charge to the file."""
        with upload.part.open("rb") as f:
            os.fsync(f.fileno())
            digest = hashlib.sha256()
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        with self._lock:
            self._check_held(upload_id, upload)
            file_id = self._new_id()
            data_path = self.files / f"{file_id}.bin"
            os.replace(upload.part, data_path)
            try:
                _fsync_dir(self.files)  # the renamed bytes are durable before the record that points to them
                now = time.time()
                resource = {"name": f"files/{file_id}", "mimeType": upload.mime_type, "sizeBytes": str(upload.received),
                            "createTime": _iso(now), "updateTime": _iso(now),
                            "expirationTime": _iso(now + self.options.ttl_s),
                            "sha256Hash": base64.b64encode(digest.digest()).decode(), "uri": f"files/{file_id}",
                            "state": "ACTIVE", "source": "UPLOADED", "_expires": now + self.options.ttl_s}
                if upload.display_name:
                    resource["displayName"] = upload.display_name
                replace_file(self.files / f"{file_id}.json", [json.dumps(resource).encode()])  # fsynced, renamed
                _fsync_dir(self.files)
            except OSError:
                data_path.unlink(missing_ok=True)
                raise
            self._table.pop(upload_id)
            self._records[file_id] = resource
            self._charges[file_id] = _file_charge(resource)
            self._used += self._charges[file_id] - upload.charge
            upload.charge = 0
            return dict(resource)

