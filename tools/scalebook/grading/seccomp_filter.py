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


# The calls a uid box (sandbox.py's second mode: an unprivileged uid of its own, where bubblewrap
# cannot make namespaces) may not make: no sockets, no tracing or reading of another process, no
# namespaces or mounts, no way around the filter or the kernel's own accounting (io_uring runs
# its operations outside seccomp; bpf, perf events and userfaultfd reach the kernel's internals).
UID_BOX_FORBIDDEN = (
    "socket", "socketpair", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsmount", "fsconfig", "fspick", "mount_setattr", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "add_key", "request_key", "keyctl",
    "name_to_handle_at", "open_by_handle_at", "quotactl", "acct", "swapon", "swapoff", "reboot", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "iopl", "ioperm", "syslog",
    "setdomainname", "sethostname", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "lookup_dcookie", "vhangup", "personality")
# clone's flags that make a namespace (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
# NEWNET): a uid box forks (the compiler does) but never into a namespace of its own.
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000)
O_WRONLY, O_RDWR, O_CREAT, O_TRUNC = 0o1, 0o2, 0o100, 0o1000


def write_uid_box_filter(path: Path, worker: bool = False) -> None:
    """A seccomp program (BPF) the uid box's helper (native/uidbox.cpp) loads into the box's first
    process, after no_new_privs, so that every process of the box runs under it: UID_BOX_FORBIDDEN
    and clone with a namespace flag fail with EPERM, clone3 with ENOSYS (its flags sit in memory the
    filter cannot read; the C library then calls clone), other architectures' calls kill. WORKER:
    the worker box's, which also opens no file to write (a worker talks through its pipes only;
    without Landlock this keeps it from writing its own /proc/self/clear_refs, which the trusted
    side's memory proof reads, or anything else a uid may write)."""
    import errno

    import seccomp
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for call in UID_BOX_FORBIDDEN:
        try:
            rules.add_rule(seccomp.ERRNO(errno.EPERM), call)
        except (RuntimeError, ValueError):  # a call this architecture or libseccomp does not know
            continue
    for flag in CLONE_NAMESPACES:
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    if worker:
        for flag in (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC):
            rules.add_rule(seccomp.ERRNO(errno.EACCES), "openat", seccomp.Arg(2, seccomp.MASKED_EQ, flag, flag))
            rules.add_rule(seccomp.ERRNO(errno.EACCES), "open", seccomp.Arg(1, seccomp.MASKED_EQ, flag, flag))
        rules.add_rule(seccomp.ERRNO(errno.EACCES), "creat")
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "openat2")  # its flags sit in memory: the C library falls back
    with open(path, "wb") as out:
        rules.export_bpf(out)
