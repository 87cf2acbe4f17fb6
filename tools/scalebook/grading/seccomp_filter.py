"""The seccomp program every worker runs under: no process, shared state or hidden memory outlives a
check, and no other architecture's system calls (written into the grading kit by kit.py)."""
from __future__ import annotations

from pathlib import Path

# madvise's advice that keeps pages mapped but clears their accessed bits (MADV_FREE, MADV_COLD,
# MADV_PAGEOUT), or may move them into merged or huge pages whose accessed bits start clear
# (MADV_MERGEABLE, MADV_HUGEPAGE, MADV_COLLAPSE): each could hide from the trusted side's memory
# proof (lib/remote/memory.cpp) what a call touched. The prctl calls that ask the same for a whole
# process: PR_SET_MEMORY_MERGE, and PR_SET_THP_DISABLE with 0 (the worker disables huge pages
# itself, lib/remote/server.cpp, and may not enable them again).
HIDING_ADVICE = (8, 12, 14, 20, 21, 25)
PR_SET_THP_DISABLE, PR_SET_MEMORY_MERGE = 41, 67


def write_no_fork_filter(path: Path) -> None:
    """A seccomp program (BPF, loaded by the worker box's first process into each worker) under
    which fork, vfork, clone and clone3 fail with EPERM, and so do the calls that make state beyond
    the process (SysV IPC, message queues, keys) or reach another process (ptrace), madvise with
    HIDING_ADVICE, process_madvise and the prctl calls named there; any other architecture's system
    calls (i386, x32) kill the process."""
    import errno

    import seccomp
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    # Nothing a worker makes may outlive it, for the next check's worker in the same box to find:
    # no SysV IPC or message queues, no keys in the box's keyrings, and no tracing of the box's
    # first process (which starts the workers).
    # Nor may it lower its own priority or scheduling class: the time limits leave out the time a
    # worker waits for a CPU (lib/remote/client.cpp), which a worker that asked to wait could stretch.
    for call in ("fork", "vfork", "clone", "clone3", "process_madvise", "shmget", "msgget", "semget", "mq_open",
                 "add_key", "request_key", "keyctl", "ptrace", "process_vm_readv", "process_vm_writev",
                 "pidfd_getfd", "setpriority", "sched_setscheduler", "sched_setattr", "sched_setparam",
                 "ioprio_set"):
        rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
    # madvise's advice and prctl's option are ints: the kernel reads the low 32 bits of the register,
    # so the filter compares those alone (20 + 2^32 is MADV_COLD too).
    def low(argument: int, value: int):
        return seccomp.Arg(argument, seccomp.MASKED_EQ, 0xFFFFFFFF, value)

    for advice in HIDING_ADVICE:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "madvise", low(2, advice))
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "prctl", low(0, PR_SET_MEMORY_MERGE))
    rules.add_rule(seccomp.ERRNO(errno.EPERM), "prctl", low(0, PR_SET_THP_DISABLE), seccomp.Arg(1, seccomp.EQ, 0))
    with open(path, "wb") as out:
        rules.export_bpf(out)
