// SPDX-License-Identifier: GPL-2.0
/*
 * The executable file mappings of each process that goes away, with their
 * build IDs, for `buildid record-exits`: at the exit of a process' last
 * thread (or the first of a group exit: exit_group(), a fatal signal), and
 * at an exec, which drops the old image.  Both are seen while the mm is
 * still there: at the entry of do_exit() (sched_process_exit comes after
 * exit_mm()), and inside begin_new_exec() at set_mm_exe_file().
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "record_exits.h"

char _license[] SEC("license") = "GPL";

#define PF_KTHREAD		0x00200000
#define SIGNAL_GROUP_EXIT	0x00000004
#define FMODE_BACKING		(1U << 24)
#define VM_EXEC			0x00000004UL
#define MINORBITS		20
#define PATH_STEPS		40
#define NAME_MAX_READ		255

/* Kernel types, relocated against the running kernel's BTF by libbpf. */
struct qstr {
	__u32 len;
	const unsigned char *name;
} __attribute__((preserve_access_index));

struct dentry {
	struct dentry *d_parent;
	struct qstr d_name;
} __attribute__((preserve_access_index));

struct vfsmount {
	struct dentry *mnt_root;
} __attribute__((preserve_access_index));

struct mount {
	struct mount *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
} __attribute__((preserve_access_index));

struct path {
	struct vfsmount *mnt;
	struct dentry *dentry;
} __attribute__((preserve_access_index));

struct super_block {
	__u32 s_dev;
} __attribute__((preserve_access_index));

struct inode {
	unsigned long i_ino;
	struct super_block *i_sb;
} __attribute__((preserve_access_index));

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_mode;
} __attribute__((preserve_access_index));

struct backing_file {
	struct file file;
	struct path user_path;
} __attribute__((preserve_access_index));

struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	unsigned long vm_flags;
	unsigned long vm_pgoff;
	struct file *vm_file;
} __attribute__((preserve_access_index));

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;
	unsigned int flags;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	unsigned int flags;
	__u64 start_time;
	__u64 self_exec_id;
	struct task_struct *group_leader;
	char comm[16];
	struct signal_struct *signal;
	struct mm_struct *mm;
} __attribute__((preserve_access_index));

struct bpf_iter_task_vma {
	__u64 opaque;
};

struct bpf_iter_num {
	__u64 opaque;
};

extern int bpf_vma_build_id(struct vm_area_struct *vma, void *build_id,
			    __u32 build_id__szk) __ksym;
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __ksym;
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} records SEC(".maps");

/* A process' image that went away: its exit, or one of its execs. */
struct recorded_key {
	__u64 start_time;	/* of the thread group leader */
	__u32 tgid;
	__u32 event;		/* enum record_event */
	__u64 exec_id;		/* the exec'ing thread's self_exec_id; 0 for an exit */
};

/*
 * Images already recorded: a group exit runs do_exit() in every thread,
 * and each hook has two copies of its program (see on_exit()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct recorded_key);
	__type(value, __u8);
} recorded SEC(".maps");

/* Claims that failed for want of a map entry: the image was recorded anyway. */
__u64 claim_failures;

/*
 * The first program to see an image claims it (1); 0 if another one did.
 * If the map has no entry to give, the image is recorded all the same: a
 * second list of it is better than none.
 */
static __always_inline int claim(struct task_struct *task, __u32 event, __u64 exec_id)
{
	struct recorded_key key = {
		.start_time = task->group_leader->start_time,
		.tgid = task->tgid,
		.event = event,
		.exec_id = exec_id,
	};
	__u8 yes = 1;
	long err = bpf_map_update_elem(&recorded, &key, &yes, BPF_NOEXIST);

	if (err == -17)		/* EEXIST */
		return 0;
	if (err)
		__sync_fetch_and_add(&claim_failures, 1);
	return 1;
}

/* What user space is told it lost: records the ring buffer had no room for. */
__u64 dropped_records;
/* Processes whose end record was lost (their mappings may be incomplete). */
__u64 dropped_ends;
/* Processes whose mappings could not be walked (bpf_iter_task_vma_new() failed). */
__u64 walk_failures;

/*
 * The path of @f as the mount tree has it (from the root of the mount
 * namespace the file's mount is in), for an overlayfs file the path the
 * user opened, not the layer's: into r->path from the leaf up, each name
 * followed by '/' ("libc.so.6/lib/usr/"), which user space turns around;
 * r->path_cut when the names nearer the root did not fit.
 *
 * The steps are those of a numbers iterator, not of a loop the verifier
 * unrolls, and everything a step carries to the next lives in the record
 * (r->walk_dentry, r->walk_mnt, r->path_len), where the verifier does not
 * track values: the state at the start of the second step matches the
 * first's, so the body is verified about twice, not PATH_STEPS times for
 * each way the step before went.
 */
static __always_inline void record_path(struct mapping_record *r, struct file *f)
{
	struct bpf_iter_num steps;
	struct path path;

	if (BPF_CORE_READ(f, f_mode) & FMODE_BACKING)
		path = BPF_CORE_READ((struct backing_file *)f, user_path);
	else
		path = BPF_CORE_READ(f, f_path);
	r->walk_dentry = (__u64)path.dentry;
	r->walk_mnt = (__u64)path.mnt - bpf_core_field_offset(struct mount, mnt);
	r->path_len = 0;
	/* Until the walk reaches the root: deeper than PATH_STEPS, or a name did not fit. */
	r->path_cut = 1;
	bpf_iter_num_new(&steps, 0, PATH_STEPS);
	while (bpf_iter_num_next(&steps)) {
		struct dentry *dentry = (void *)r->walk_dentry;
		struct mount *mnt = (void *)r->walk_mnt;
		struct dentry *parent = BPF_CORE_READ(dentry, d_parent);
		const unsigned char *name;
		__u32 off, len;

		if (dentry == BPF_CORE_READ(mnt, mnt.mnt_root) || dentry == parent) {
			struct mount *up = BPF_CORE_READ(mnt, mnt_parent);

			if (up == mnt) {
				r->path_cut = 0;
				break;
			}
			r->walk_dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
			r->walk_mnt = (__u64)up;
			continue;
		}
		name = BPF_CORE_READ(dentry, d_name.name);
		len = BPF_CORE_READ(dentry, d_name.len);
		off = r->path_len;
		if (len > NAME_MAX_READ || off + len + 1 > RECORD_PATH_MAX)
			break;
		bpf_probe_read_kernel(&r->path[off & (RECORD_PATH_MAX - 1)], len & NAME_MAX_READ,
				      name);
		r->path[(off + len) & (RECORD_PATH_MAX - 1)] = '/';
		r->path_len = off + len + 1;
		r->walk_dentry = (__u64)parent;
	}
	bpf_iter_num_destroy(&steps);
}

/*
 * Sends each executable file mapping of @task, then an end record.  Nothing
 * is counted on the stack across the walk (the verifier would see a new
 * state at each step): a mapping the ring buffer has no room for counts in
 * dropped_records, and the end record says whether that moved meanwhile.
 */
static __always_inline void record_mappings(struct task_struct *task, __u32 event)
{
	__u64 dropped_before = __sync_fetch_and_add(&dropped_records, 0);
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct mapping_record *r;

	if (bpf_iter_task_vma_new(&it, task, 0)) {
		__sync_fetch_and_add(&walk_failures, 1);
		bpf_iter_task_vma_destroy(&it);
		return;
	}
	while ((vma = bpf_iter_task_vma_next(&it))) {
		struct file *f = vma->vm_file;

		if (!f || !(vma->vm_flags & VM_EXEC))
			continue;
		r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
		if (!r) {
			__sync_fetch_and_add(&dropped_records, 1);
			continue;
		}
		r->kind = RECORD_MAPPING;
		r->event = event;
		r->start = vma->vm_start;
		r->end = vma->vm_end;
		r->offset = vma->vm_pgoff << 12;
		r->ino = BPF_CORE_READ(f, f_inode, i_ino);
		r->time_ns = bpf_ktime_get_ns();
		r->dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		r->pid = task->tgid;
		r->dropped = 0;
		bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), task->comm);
		r->build_id_ret = bpf_vma_build_id(vma, r->build_id, sizeof(r->build_id));
		record_path(r, f);
		bpf_ringbuf_submit(r, 0);
	}
	bpf_iter_task_vma_destroy(&it);

	r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);
	if (!r) {
		/* The process' list has no end: user space counts it as incomplete. */
		__sync_fetch_and_add(&dropped_ends, 1);
		return;
	}
	__builtin_memset(r, 0, offsetof(struct mapping_record, path));
	r->kind = RECORD_END;
	r->event = event;
	r->time_ns = bpf_ktime_get_ns();
	r->pid = task->tgid;
	/* Some mapping, this process' or another's, found the ring buffer full. */
	r->dropped = __sync_fetch_and_add(&dropped_records, 0) != dropped_before;
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), task->comm);
	bpf_ringbuf_submit(r, 0);
}

/* A thread exits: record the process once, if it goes away with it. */
static __always_inline void record_exit(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct signal_struct *sig = task->signal;

	if ((task->flags & PF_KTHREAD) || !task->mm)
		return;
	/* The last thread, or any thread of a group exit (the first one records). */
	if (!(sig->flags & SIGNAL_GROUP_EXIT) && sig->live.counter != 1)
		return;
	if (claim(task, RECORD_EXIT, 0))
		record_mappings(task, RECORD_EXIT);
}

/*
 * An exec: the old image goes away, the process stays.  Called where
 * begin_new_exec() gives the new mm its file, the only caller that passes
 * a file (an mm's teardown passes NULL): past de_thread(), so no other
 * thread runs the old image any more, and before exec_mmap() drops it.
 */
static __always_inline void record_exec(struct file *new_exe_file)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (new_exe_file && !(task->flags & PF_KTHREAD) && task->mm &&
	    claim(task, RECORD_EXEC, task->self_exec_id))
		record_mappings(task, RECORD_EXEC);
}

/*
 * The trampoline runs a program at most once per CPU at a time: while a
 * task that was preempted inside it is off the CPU, the next task to exit
 * there skips it (a recursion miss, which the tool reports).  So each hook
 * runs two copies, which claim an image through `recorded`: an image is
 * lost only if two tasks are held inside both copies on its CPU at once.
 * Keeping preemption off in the walk would not help (its end,
 * bpf_preempt_enable(), is where a long walk is preempted) and would cost
 * latency in proportion to the process' mappings.
 */
#define RECORDER(hook, name, record, ...)	\
	SEC("fentry/" #hook)			\
	int BPF_PROG(name, __VA_ARGS__)		\
	{					\
		record;				\
		return 0;			\
	}

RECORDER(do_exit, on_exit, record_exit(), long code)
RECORDER(do_exit, on_exit_again, record_exit(), long code)
RECORDER(set_mm_exe_file, on_exec, record_exec(file), void *mm, struct file *file)
RECORDER(set_mm_exe_file, on_exec_again, record_exec(file), void *mm, struct file *file)
