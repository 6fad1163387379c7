"""Start a command in the grading sandbox: hide folders, set resource limits, drop privileges, exec.

    python -S jail.py CONFIG.json -- python -S -m ipykernel_launcher -f kernel.json

``labs.grading.sandbox`` runs it inside ``unshare --mount`` (a mount namespace of its own), so the
folders it hides — the grader's repository with the lab sources and solutions, the submissions, the
results — are empty tmpfs mounts for this process and its children only, every other mount is
read-only but the working folder, and every capability is dropped (so none of it can be undone). Then
the limits (``setrlimit``: address space, CPU seconds, processes, file size, no core files) and the
working folder. The parent-death signal kills it if the grader dies. This file imports only the
standard library: it runs with ``python -S`` in the sandbox.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND, MS_REC = 1, 2, 4, 32, 4096, 16384
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 24, 38


def _mount(libc: ctypes.CDLL, source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                  data.encode() if data else None) != 0:  # fmt: skip
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def hide(config: dict) -> None:
    """Cover each folder of ``config["hide"]`` with an empty tmpfs; put back ``config["keep"]`` (a folder
    inside a hidden one that the sandbox needs: the Python environment, the working folder) by bind
    mounts; then make every other mount read-only."""
    libc = ctypes.CDLL(None, use_errno=True)
    work = config["work"]
    keep = [*config.get("keep", []), work]
    kept = []
    for i, path in enumerate(keep):
        spot = os.path.join(config["stage"], f"{os.getpid()}-{i}")
        os.makedirs(spot, exist_ok=True)
        _mount(libc, path, spot, None, MS_BIND | MS_REC, None)
        kept.append((spot, path))
    for path in config.get("hide", []):
        if os.path.isdir(path):
            _mount(libc, "tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
    for spot, path in kept:
        os.makedirs(path, exist_ok=True)
        _mount(libc, spot, path, None, MS_BIND | MS_REC, None)
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in points:
        if point == work or point.startswith(("/proc", "/dev", "/sys")):
            continue
        # read-only: nothing outside the working folder can be written (errors: a mount it cannot touch)
        libc.mount(b"none", point.encode(), None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID, None)


def drop_capabilities() -> None:
    """No capability now or after exec (so no mount can be undone), and no way to gain one."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    libc.capset(header, data)
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _tasks_of(uid: int) -> int:
    """How many processes and threads ``uid`` runs now (what RLIMIT_NPROC counts)."""
    n = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                continue
    return n


def limit(config: dict) -> None:
    """The resource limits; the process limit counts from what this user runs already."""
    for name, value in config.get("limits", {}).items():
        value = int(value) + (_tasks_of(os.getuid()) if name == "nproc" else 0)
        resource.setrlimit(getattr(resource, f"RLIMIT_{name.upper()}"), (value, value))


def main(argv: list[str]) -> None:
    cfg_path, sep, *command = argv
    assert sep == "--" and command, "usage: jail.py CONFIG -- COMMAND..."
    with open(cfg_path) as f:
        config = json.load(f)
    os.umask(0o077)
    parent = os.getppid()
    if config.get("namespace"):
        hide(config)
        drop_capabilities()
    limit(config)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the grader already died
        os._exit(1)
    os.chdir(config["work"])
    os.execve(command[0], command, config["env"])


if __name__ == "__main__":
    main(sys.argv[1:])
