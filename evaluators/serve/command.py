"""``omnijudge serve``: the Gemini and OpenAI APIs the public evaluators call, answered by omnijudge
judges on this machine (``docs/serve.md``)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
from pathlib import Path

from evaluators.runtime_options import (add_runtime_arguments, batch_size_arg, non_negative_float_arg,
                                        runtime_from_args)
from evaluators.serve.limits import DEFAULT_MAX_PROMPT_CHARS

log = logging.getLogger(__name__)

API_KEY_ENV = "OMNIJUDGE_API_KEY"


def uvicorn_limits() -> dict:
    """uvicorn settings of the server's edge: the h11 protocol with a header timeout
    (``middleware.HeaderTimeoutH11``, ``limits.HEADER_TIMEOUT_S``), 5 s idle keep-alive, request heads of
    at most 16 KiB, and at most 512 connections and requests at once (then 503)."""
    from evaluators.serve.middleware import HeaderTimeoutH11

    return {"http": HeaderTimeoutH11, "timeout_keep_alive": 5, "h11_max_incomplete_event_size": 16 << 10,
            "limit_concurrency": 512}


def _positive_float(text: str) -> float:
    value = non_negative_float_arg(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


def add_serve_command(sub) -> None:
    """Register ``serve`` on the top-level sub-parsers."""
    from evaluators.benchmark_command import add_preset_arguments

    p = sub.add_parser("serve", help="answer the Gemini / OpenAI judge calls of the public evaluators with "
                                     "omnijudge judges (a local server)")
    p.add_argument("--routes", help="ROUTES.yaml: model name -> prompt family -> judge folder or preset "
                                    "(default: every known family on its zero-shot presets, for any model name)")
    add_preset_arguments(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback; any other needs --api-key)")
    p.add_argument("--port", type=int, default=8080, help="TCP port to listen on (default 8080)")
    p.add_argument("--api-key", default=None,
                   help=f"key every client must send (x-goog-api-key, ?key= or Authorization: Bearer); "
                        f"default: ${API_KEY_ENV} if set")
    p.add_argument("--folder", default="omnijudge-serve",
                   help="server folder: uploaded files and decoding temporaries (default ./omnijudge-serve)")
    p.add_argument("--max-body-mb", type=_positive_float, default=64.0, help="largest request body (default 64)")
    p.add_argument("--max-audio-seconds", type=_positive_float, default=600.0,
                   help="longest clip judged (default 600)")
    p.add_argument("--max-prompt-chars", type=batch_size_arg, default=DEFAULT_MAX_PROMPT_CHARS,
                   help=f"longest prompt, its text parts joined (default {DEFAULT_MAX_PROMPT_CHARS}: the longest "
                        "public template plus 8,000 characters of placeholder values)")
    p.add_argument("--max-inflight-mb", type=_positive_float, default=512.0,
                   help="most request-body megabytes held in memory by all requests together; past it a "
                        "request gets 503 with Retry-After (default 512)")
    p.add_argument("--max-audios-per-request", type=batch_size_arg, default=16,
                   help="most audio parts in one request (a pairwise or group prompt carries one per system; "
                        "past it: 400; default 16)")
    p.add_argument("--max-request-audio-mb", type=_positive_float, default=64.0,
                   help="most audio megabytes a request of several audios names, inline and uploaded files "
                        "together (past it: 413; default 64)")
    p.add_argument("--files-quota-mb", type=_positive_float, default=2048.0,
                   help="most bytes the uploaded files may hold together (default 2048)")
    p.add_argument("--files-ttl-hours", type=_positive_float, default=48.0,
                   help="hours an uploaded file is kept (default 48, as Gemini)")
    p.add_argument("--upload-ttl-minutes", type=_positive_float, default=60.0,
                   help="minutes an unfinished resumable upload may stay idle before it is dropped and its "
                        "quota freed (default 60)")
    p.add_argument("--max-wait-ms", type=non_negative_float_arg, default=10.0,
                   help="longest a request waits for batch-mates (default 10)")
    p.add_argument("--max-batch", type=batch_size_arg, default=16, help="most clips per model call (default 16)")
    p.add_argument("--max-tokens-per-batch", type=batch_size_arg, default=None,
                   help="most padded prompt tokens per model call (clips x longest; default: no budget)")
    add_runtime_arguments(p)
    p.set_defaults(func=run_serve)


def is_loopback(host: str) -> bool:
    """True for loopback addresses and names that resolve only to them (``localhost``)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def build_app(args):
    """The app of parsed ``serve`` arguments (judges loaded)."""
    from evaluators.serve.routes import JudgeLoader, Routes, check_route_bases, load_route_judges

    api_key = args.api_key if args.api_key is not None else os.environ.get(API_KEY_ENV) or None
    if not is_loopback(args.host) and not api_key:
        raise ValueError(f"--host {args.host}: binding a non-loopback address needs --api-key (or ${API_KEY_ENV})")
    if args.routes and (args.base or args.backbone):
        raise ValueError("--base/--backbone apply without --routes only; give base/backbone in the routes file")
    routes = Routes.from_yaml(args.routes) if args.routes else Routes.default(args.base, args.backbone)
    check_route_bases(routes)  # offline: one line within seconds, before torch loads
    from evaluators.serve.app import ServeOptions, create_app
    from evaluators.serve.batcher import BatchOptions
    from evaluators.serve.files_store import StoreOptions
    from evaluators.serve.folder_lock import FolderLock

    folder_lock = FolderLock.acquire(args.folder)  # before judges load or the folder is touched: one line if busy
    judges = load_route_judges(routes, JudgeLoader(runtime_from_args(args)))
    mb = 1 << 20
    options = ServeOptions(
        folder=Path(args.folder), api_key=api_key, max_body_bytes=int(args.max_body_mb * mb),
        max_audio_seconds=args.max_audio_seconds, max_prompt_chars=args.max_prompt_chars,
        max_inflight_bytes=int(args.max_inflight_mb * mb), max_audios=args.max_audios_per_request,
        max_request_audio_bytes=int(args.max_request_audio_mb * mb),
        store=StoreOptions(quota_bytes=int(args.files_quota_mb * mb), ttl_s=args.files_ttl_hours * 3600,
                           upload_ttl_s=args.upload_ttl_minutes * 60,
                           max_file_bytes=int(min(args.files_quota_mb, 256) * mb)),
        batch=BatchOptions(max_wait_ms=args.max_wait_ms, max_batch=args.max_batch,
                           max_tokens=args.max_tokens_per_batch))
    return create_app(judges, options, folder_lock, routes.settings())


def run_serve(args) -> int:
    import uvicorn

    app = build_app(args)
    for model, families in app.state.judge_families.items():
        print(f"model {model}: {', '.join(families)}", flush=True)
    # uvicorn stops accepting on SIGINT/SIGTERM and finishes the requests in flight before the
    # app's shutdown drains the batcher
    uvicorn.run(app, host=args.host, port=args.port, log_level="info", timeout_graceful_shutdown=60,
                **uvicorn_limits())
    return 0
