"""The Files API store of ``omnijudge serve``: uploaded audio kept in a server folder under names
the server makes, with a byte quota and an expiry (``docs/serve.md#files``).

Layout under ``root``: ``files/<id>.bin`` (the bytes) and ``files/<id>.json`` (the resource, the
Gemini ``File`` JSON); ``uploads/<upload id>.part`` and ``.json`` (a resumable upload in progress).
A file exists once its ``.json`` does: the bytes are fsynced and renamed into place first, then the
resource is written through a fsynced temporary file and a rename, so a kill at any point leaves
either no file or a whole one. Uploads in progress do not survive a restart (the client uploads
again); leftovers of a kill are removed when the store opens.
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
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

_ID = re.compile(r"\A[a-z0-9]{1,40}\Z")


class StoreError(ValueError):
    """A request the store refuses: ``status`` is the HTTP status (404 unknown, 400 bad offset,
    413 over the quota or the file limit)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class StoreOptions:
    """``quota_bytes``: most bytes kept (files and uploads in progress); ``max_file_bytes``: the
    largest file; ``ttl_s``: seconds a file lives after upload (Gemini keeps files 48 h)."""

    quota_bytes: int = 2 << 30
    max_file_bytes: int = 256 << 20
    ttl_s: float = 48 * 3600

    def __post_init__(self):
        for name in ("quota_bytes", "max_file_bytes", "ttl_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"files store {name} must be a number > 0, got {value!r}")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _write_durably(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class FileStore:
    """Uploaded files of one server folder (thread-safe)."""

    def __init__(self, root: str | Path, options: StoreOptions = StoreOptions()):
        self.root = Path(root)
        self.options = options
        self.files = self.root / "files"
        self.uploads = self.root / "uploads"
        self.files.mkdir(parents=True, exist_ok=True)
        self.uploads.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._recover()

    def _recover(self) -> None:
        """Remove what a kill left: uploads in progress, temporaries, bytes with no resource."""
        for p in self.uploads.iterdir():
            p.unlink(missing_ok=True)
        for p in self.files.iterdir():
            if p.suffix == ".tmp" or (p.suffix == ".bin" and not p.with_suffix(".json").exists()):
                p.unlink(missing_ok=True)
        self.expire()

    # ---- files ----------------------------------------------------------------------------------
    def _resource_path(self, file_id: str) -> Path:
        if not _ID.match(file_id):
            raise StoreError(404, f"no file files/{file_id}")
        return self.files / f"{file_id}.json"

    def get(self, file_id: str) -> dict:
        """The ``File`` resource of ``files/<file_id>``; an unknown or expired id is a 404."""
        path = self._resource_path(file_id)
        try:
            resource = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise StoreError(404, f"no file files/{file_id} (never uploaded, deleted or expired)") from None
        if resource["_expires"] <= time.time():
            self.delete(file_id, missing_ok=True)
            raise StoreError(404, f"file files/{file_id} has expired")
        return resource

    def data_path(self, file_id: str) -> Path:
        self.get(file_id)
        return self.files / f"{file_id}.bin"

    def list(self) -> list[dict]:
        self.expire()
        out = []
        for p in sorted(self.files.glob("*.json")):
            try:
                out.append(self.get(p.stem))
            except StoreError:
                continue
        return out

    def delete(self, file_id: str, missing_ok: bool = False) -> None:
        path = self._resource_path(file_id)
        if not path.exists() and not missing_ok:
            raise StoreError(404, f"no file files/{file_id}")
        path.unlink(missing_ok=True)  # the resource first: the file is gone even if the bytes linger
        (self.files / f"{file_id}.bin").unlink(missing_ok=True)

    def expire(self) -> int:
        """Delete expired files; returns how many."""
        now, n = time.time(), 0
        for p in list(self.files.glob("*.json")):
            try:
                expired = json.loads(p.read_text(encoding="utf-8"))["_expires"] <= now
            except (OSError, ValueError, KeyError):
                expired = True  # a resource that cannot be read is no file
            if expired:
                self.delete(p.stem, missing_ok=True)
                n += 1
        return n

    def used_bytes(self) -> int:
        return sum(p.stat().st_size for d in (self.files, self.uploads) for p in d.glob("*")
                   if p.suffix in (".bin", ".part"))

    @staticmethod
    def public(resource: dict, base_url: str) -> dict:
        """The resource as the API shows it: without the store's own keys, its ``uri`` the full
        address under ``base_url`` (the API version's root, ending with ``/``)."""
        out = {k: v for k, v in resource.items() if not k.startswith("_")}
        out["uri"] = f"{base_url}{resource['name']}"
        return out

    # ---- uploads --------------------------------------------------------------------------------
    def start_upload(self, size: int | None, mime_type: str, display_name: str | None) -> str:
        """Open a resumable upload of ``size`` bytes (None: not announced); returns its id."""
        if size is not None:
            self._check_room(size)
        upload_id = secrets.token_hex(16)
        _write_durably(self.uploads / f"{upload_id}.json",
                       json.dumps({"size": size, "mime_type": mime_type, "display_name": display_name}).encode())
        (self.uploads / f"{upload_id}.part").touch()
        return upload_id

    def append(self, upload_id: str, offset: int, chunk: bytes) -> int:
        """Add ``chunk`` at ``offset`` (which must be the bytes received so far); returns that total."""
        if not re.fullmatch(r"[0-9a-f]{32}", upload_id) or not (self.uploads / f"{upload_id}.json").exists():
            raise StoreError(404, f"no upload in progress with id {upload_id!r} (finished, or lost in a restart)")
        part = self.uploads / f"{upload_id}.part"
        with self._lock:
            have = part.stat().st_size
            if offset != have:
                raise StoreError(400, f"X-Goog-Upload-Offset {offset} does not match the {have} bytes received")
            if have + len(chunk) > self.options.max_file_bytes:
                raise StoreError(413, f"file larger than the limit of {self.options.max_file_bytes} bytes")
            self._check_room(len(chunk))
            with part.open("ab") as f:
                f.write(chunk)
            return have + len(chunk)

    def received(self, upload_id: str) -> int:
        return (self.uploads / f"{upload_id}.part").stat().st_size

    def finish(self, upload_id: str) -> dict:
        """Make the upload a file; returns its resource."""
        meta = json.loads((self.uploads / f"{upload_id}.json").read_text(encoding="utf-8"))
        part = self.uploads / f"{upload_id}.part"
        size = part.stat().st_size
        if meta["size"] is not None and size != meta["size"]:
            raise StoreError(400, f"upload finalized with {size} bytes; {meta['size']} were announced")
        with part.open("rb") as f:
            os.fsync(f.fileno())
            digest = hashlib.sha256()
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        file_id = self._new_id()
        os.replace(part, self.files / f"{file_id}.bin")
        (self.uploads / f"{upload_id}.json").unlink(missing_ok=True)
        return self._publish(file_id, size, digest.digest(), meta["mime_type"], meta["display_name"])

    def put(self, data: bytes, mime_type: str, display_name: str | None) -> dict:
        """Store a whole file at once (multipart or media upload); returns its resource."""
        if len(data) > self.options.max_file_bytes:
            raise StoreError(413, f"file larger than the limit of {self.options.max_file_bytes} bytes")
        upload_id = self.start_upload(len(data), mime_type, display_name)
        self.append(upload_id, 0, data)
        return self.finish(upload_id)

    def _check_room(self, extra: int) -> None:
        if extra > self.options.max_file_bytes:
            raise StoreError(413, f"file larger than the limit of {self.options.max_file_bytes} bytes")
        if self.used_bytes() + extra > self.options.quota_bytes:
            self.expire()
            if self.used_bytes() + extra > self.options.quota_bytes:
                raise StoreError(413, f"the file store's quota of {self.options.quota_bytes} bytes is used up; "
                                      "delete files first")

    def _new_id(self) -> str:
        while True:
            file_id = secrets.token_hex(6)
            if not (self.files / f"{file_id}.json").exists() and not (self.files / f"{file_id}.bin").exists():
                return file_id

    def _publish(self, file_id: str, size: int, sha256: bytes, mime_type: str, display_name: str | None) -> dict:
        _fsync_dir(self.files)  # the renamed bytes are durable before the resource that points to them
        now = time.time()
        resource = {"name": f"files/{file_id}", "mimeType": mime_type, "sizeBytes": str(size),
                    "createTime": _iso(now), "updateTime": _iso(now), "expirationTime": _iso(now + self.options.ttl_s),
                    "sha256Hash": base64.b64encode(sha256).decode(), "uri": f"files/{file_id}",
                    "state": "ACTIVE", "source": "UPLOADED", "_expires": now + self.options.ttl_s}
        if display_name:
            resource["displayName"] = display_name
        _write_durably(self.files / f"{file_id}.json", json.dumps(resource).encode())
        return resource
