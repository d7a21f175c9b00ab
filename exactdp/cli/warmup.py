"""``exactdp warmup``: prepare this machine so that a query's first answer is fast.

It byte-compiles exactdp's modules, builds the Numba cache of every kernel (the first run
after install otherwise compiles the kernels it calls) and compiles every kernel ahead of
time for this machine (:mod:`exactdp.kernels.aot`), so that a later process answers
without importing Numba.  Run it again after upgrading exactdp, Numba or NumPy (a stale
module is never used: the kernels then fall back to the JIT cache).

``numba.pycc`` is deprecated upstream: where it cannot be imported (a Numba without it),
warmup builds the JIT cache only and says so (exit 0); every kernel then loads from that
cache on its first call, as with ``EXACTDP_AOT=0`` (``bench/startup.md`` measures both).
"""

from __future__ import annotations

import sys

from exactdp.cli._common import emit_result, fail

__all__ = ["register"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "warmup", help="build the kernel caches (JIT and ahead of time) for fast first answers",
        description="Byte-compile exactdp, build the Numba cache of every kernel and compile every kernel "
                    "ahead of time (numba.pycc, for this CPU, same code generation as the JIT) into a "
                    "per-user cache folder, so that a query's first answer imports no Numba. "
                    "EXACTDP_AOT=0 disables the ahead-of-time kernels; EXACTDP_AOT_DIR moves their folder.")
    p.add_argument("--no-aot", action="store_true", help="only byte-compile and build the JIT cache")
    p.add_argument("--check", action="store_true", help="only report whether a valid ahead-of-time module exists")
    p.add_argument("--json", action="store_true", help='print one JSON object {"command", "design", "points"}')
    p.set_defaults(func=_run)


def _say(args, text: str) -> None:
    if not args.json:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def _byte_compile() -> bool:
    """Write the bytecode of exactdp's modules (later processes skip parsing them, even
    under ``PYTHONDONTWRITEBYTECODE``); ``False`` if a folder could not be written."""
    import compileall
    import importlib

    folders = [f for p in ("exactdp", "exactdp.kernels") for f in importlib.import_module(p).__path__]
    return all([bool(compileall.compile_dir(f, quiet=2)) for f in folders])


def _run(args) -> int:
    import time

    from exactdp.kernels import aot
    from exactdp.kernels.jit import KERNELS_DIGEST

    folder = aot.module_dir(KERNELS_DIGEST)
    out = {"aot_dir": str(folder), "aot_mode": aot.aot_mode()}
    manifest = folder / "manifest.json"
    if args.check:
        out["aot_valid"] = manifest.exists()
        if args.json:
            emit_result([out], design=None)
        else:
            print(f"ahead-of-time kernels: {'valid module in' if out['aot_valid'] else 'none built for'} {folder}")
        return 0
    from tqdm import tqdm

    from exactdp.kernels.aot_build import all_kernels, build, pycc_available

    t0 = time.perf_counter()
    out["byte_compiled"] = _byte_compile()
    kernels = all_kernels()
    for kern in tqdm(kernels.values(), desc="JIT cache", unit="kernel", disable=args.json, file=sys.stderr,
                     leave=False):
        _ = kern.dispatcher  # loaded from the Numba cache, or compiled into it
    out["jit_kernels"] = len(kernels)
    out["jit_seconds"] = round(time.perf_counter() - t0, 1)
    aot_wanted = not args.no_aot
    if aot_wanted and not pycc_available():
        aot_wanted = False
        out.update(aot_available=False, aot_kernels=0)
        _say(args, "exactdp warmup: numba.pycc is not available (deprecated upstream, absent from this Numba): "
                   "no ahead-of-time module; the kernels load from the JIT cache just built")
    if aot_wanted:
        built_before = manifest.exists()
        _say(args, "exactdp warmup: " + ("ahead-of-time module up to date" if built_before else
                                         f"compiling {len(kernels)} kernels ahead of time (about a minute)..."))
        t1 = time.perf_counter()
        try:
            info = build()
        except Exception as exc:  # noqa: BLE001 - reported on one line; the JIT cache is built
            return fail(f"warmup: {exc} (the JIT cache is built; kernels stay JIT-compiled)", code=2)
        out.update(aot_kernels=len(info["kernels"]), aot_jit_only=info["jit_only"], aot_built=not built_before,
                   aot_seconds=round(time.perf_counter() - t1, 1), cpu_name=info["cpu_name"])
    if args.json:
        emit_result([out], design=None)
    else:
        print(f"JIT cache: {out['jit_kernels']} kernels ({out['jit_seconds']} s)")
        if out.get("aot_available") is False:
            print("ahead of time: not built (numba.pycc is not available); first calls load the JIT cache")
        elif aot_wanted:
            print(f"ahead of time: {out['aot_kernels']} kernels for {out['cpu_name']} in {folder}"
                  + (f" (built in {out['aot_seconds']} s)" if out["aot_built"] else " (already built)")
                  + (f"; JIT only: {', '.join(out['aot_jit_only'])}" if out["aot_jit_only"] else ""))
            if out["aot_mode"] == "off":
                print("note: EXACTDP_AOT=0 (or NUMBA_DISABLE_JIT) is set: the ahead-of-time kernels are not used")
    return 0
