// SPDX-License-Identifier: GPL-2.0

//! Rust build ID sample: `/dev/buildid`.
//!
//! The ioctls return the ELF build ID of an open file, or of the file mapped at an address of a
//! process, with the Rust implementation of `lib/buildid` (`lib/buildid/`, which this module
//! reaches through the C API, `kernel::buildid`), and time the parser, Rust or the C reference,
//! for benchmarks.
//!
//! The ioctls, their argument structs and their rules are defined once, in
//! [`include/uapi/linux/buildid_dev.h`](srctree/include/uapi/linux/buildid_dev.h), which the
//! selftests include and the `uapi` crate has the bindings of. Every argument starts with its own
//! size and is copied the `copy_struct_from_user()` way ([`Arg`]).
//!
//! `BUILDID_IOC_FILE` parses the file open at a descriptor, nofault or sleepable.
//! `BUILDID_IOC_VMA` parses the file mapped at an address of a process, as perf and BPF see it:
//! the VMA's `vm_file` (for overlayfs, the file of the layer below), with the Rust parser, the
//! Rust parser without the build ID cache, or the C reference. `BUILDID_IOC_BENCH`
//! (`CONFIG_SAMPLE_RUST_BUILDID_BENCH`) times one entry point; its loop yields the CPU every 256
//! parses, and a pending signal ends it with `EINTR`.
//!
//! A parse that fails returns the parser's error (`EINVAL` for no build ID, `EFAULT` for data
//! the nofault mode did not find cached).

use core::mem::{offset_of, size_of, MaybeUninit};
use kernel::{
    alloc::flags::GFP_KERNEL,
    bindings,
    buildid::{
        self,
        testing::{Implementation, Mode},
        BuildId, BUILD_ID_SIZE_MAX,
    },
    c_str,
    fs::file::{fmode, File, LocalFile},
    ioctl::_IOWR,
    miscdevice::{MiscDevice, MiscDeviceFops, MiscDeviceOptions, MiscDeviceRegistration},
    mm::{MmWithUser, PtraceMode},
    page::PAGE_SHIFT,
    prelude::*,
    task::Task,
    types::{ARef, AsBytes, FromBytes},
    uaccess::UserSlice,
    uapi,
};

module! {
    type: RustBuildid,
    name: "rust_buildid",
    author: "Rust for Linux Contributors",
    description: "Rust build ID sample: /dev/buildid",
    license: "GPL",
    // The C reference and the exports of the benchmarks (lib/buildid_ref.c).
    imports_ns: ["BUILDID_C_REFERENCE"],
}

const FLAG_SLEEPABLE: u32 = uapi::BUILDID_SLEEPABLE;
const FLAG_VMA_UNCACHED: u32 = uapi::BUILDID_VMA_UNCACHED;
const FLAG_VMA_C_REFERENCE: u32 = uapi::BUILDID_VMA_C_REFERENCE;
const FLAG_VMA_LOCKLESS: u32 = uapi::BUILDID_VMA_LOCKLESS;

/// Longest argument struct accepted; the tail past what this driver knows must be zero.
const MAX_ARG_SIZE: usize = 4096;

/// Declares a `#[repr(transparent)]` wrapper of a uapi argument struct that may be copied from
/// and to user space as bytes.
macro_rules! uapi_arg {
    ($name:ident, $raw:ty, $size:expr) => {
        #[repr(transparent)]
        struct $name($raw);

        // The struct has only integer and byte array fields, whose sizes add up to its size: it
        // has no padding.
        const _: () = assert!(size_of::<$name>() == $size);

        // SAFETY: The struct has only integer and byte array fields, so any bytes are a valid
        // value.
        unsafe impl FromBytes for $name {}

        // SAFETY: The struct has no padding (asserted above), so every byte of a value is
        // initialized.
        unsafe impl AsBytes for $name {}
    };
}

uapi_arg!(FileQuery, uapi::buildid_file_query, 4 * 4 + 20 + 4);
uapi_arg!(VmaQuery, uapi::buildid_vma_query, 4 * 4 + 4 * 8 + 20 + 4);
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
uapi_arg!(BenchArg, uapi::buildid_bench, 6 * 4 + 8 + 2 * 4 + 8);

/// An argument struct, copied in the `copy_struct_from_user()` way.
struct Arg<T> {
    value: T,
    /// The size the caller gave: how much to copy back.
    user_size: usize,
    ptr: usize,
}

impl<T: FromBytes + AsBytes> Arg<T> {
    /// Copies the struct at `ptr` in: the caller's size comes first; a shorter struct than this
    /// driver's leaves the fields it lacks zero, a longer one must have zeroes past it.
    /// `min_size` is the end of the fields the caller must pass (the input fields).
    fn read(ptr: usize, min_size: usize) -> Result<Self> {
        let user_size = UserSlice::new(ptr, 4).reader().read::<u32>()? as usize;
        if user_size < min_size {
            return Err(EINVAL);
        }
        if user_size > MAX_ARG_SIZE {
            return Err(E2BIG);
        }
        let mut reader = UserSlice::new(ptr, user_size).reader();
        // SAFETY: `T: FromBytes`, so all zeroes is a valid `T`.
        let mut value: T = unsafe { MaybeUninit::zeroed().assume_init() };
        let known = user_size.min(size_of::<T>());
        reader.read_slice(&mut bytes_of_mut(&mut value)[..known])?;
        let mut tail = [0u8; 64];
        while !reader.is_empty() {
            let chunk = reader.len().min(tail.len());
            reader.read_slice(&mut tail[..chunk])?;
            if tail[..chunk].iter().any(|&b| b != 0) {
                return Err(E2BIG);
            }
        }
        Ok(Self {
            value,
            user_size,
            ptr,
        })
    }

    /// Copies back the fields the caller's struct has room for.
    fn write_back(&self) -> Result {
        let bytes = bytes_of(&self.value);
        let len = self.user_size.min(bytes.len());
        UserSlice::new(self.ptr, len)
            .writer()
            .write_slice(&bytes[..len])
    }
}

/// The bytes of `value`.
fn bytes_of<T: AsBytes>(value: &T) -> &[u8] {
    // SAFETY: `T: AsBytes`, so all `size_of::<T>()` bytes of `value` are initialized, and they
    // are borrowed for as long as `value` is.
    unsafe { core::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }
}

/// The bytes of `value`, to write to.
fn bytes_of_mut<T: FromBytes + AsBytes>(value: &mut T) -> &mut [u8] {
    // SAFETY: `T: AsBytes`, so all bytes of `value` are initialized, and `T: FromBytes`, so any
    // bytes written leave a valid `T`; they are borrowed mutably for as long as `value` is.
    unsafe { core::slice::from_raw_parts_mut((value as *mut T).cast::<u8>(), size_of::<T>()) }
}

/// `id` as a `build_id_size` and a zero-padded `build_id` field.
fn build_id_fields(id: &BuildId) -> (u32, [u8; BUILD_ID_SIZE_MAX]) {
    (id.size(), *id.padded())
}

// `enum buildid_bench_mode`.
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_NOFAULT: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_NOFAULT;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_SLEEPABLE: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_SLEEPABLE;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_MEMORY: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_MEMORY;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_EMPTY: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_EMPTY;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_VMA_LOCKLESS: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_VMA_LOCKLESS;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_VMA_TRYLOCK: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_VMA_TRYLOCK;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_RCU_READ_LOCK: u32 = uapi::buildid_bench_mode_BUILDID_BENCH_RCU_READ_LOCK;

/// Parses timed between two chances for other tasks to run.
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BATCH: u32 = 256;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const MAX_ITERATIONS: u32 = 10_000_000;
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const MAX_MEMORY_LEN: u32 = 64 * 1024;

/// `cond_resched()`: on a kernel without preemption a benchmark of millions of parses would
/// otherwise keep the CPU for seconds.
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
fn resched() {
    #[cfg(any(not(CONFIG_PREEMPTION), CONFIG_PREEMPT_DYNAMIC))]
    // SAFETY: Called from the ioctl, in process context with no lock held, where sleeping is
    // allowed.
    unsafe {
        bindings::__cond_resched()
    };
}

/// Parses `file` with `implementation`, the one the benchmark and the VMA query's flags choose.
#[inline(always)]
fn parse_with(file: &LocalFile, mode: Mode, implementation: Implementation) -> Result<BuildId> {
    buildid::testing::parse_file(file, mode, implementation)
}

fn parse_mode(flags: u32) -> Result<Mode> {
    match flags {
        0 => Ok(Mode::Nofault),
        FLAG_SLEEPABLE => Ok(Mode::Sleepable),
        _ => Err(EINVAL),
    }
}

/// The file at `fd` of the caller, if it is open for reading.
fn readable_file(fd: i32) -> Result<ARef<LocalFile>> {
    let file = LocalFile::fget(u32::try_from(fd).map_err(|_| EBADF)?)?;
    if file.mode() & fmode::FMODE_READ == 0 {
        return Err(EBADF);
    }
    Ok(file)
}

/// The ioctl commands: the full number, so that a command with this type and number but
/// another direction or size is not taken for one of these.
const IOC_FILE: u32 =
    _IOWR::<uapi::buildid_file_query>(uapi::BUILDID_IOC_TYPE, uapi::BUILDID_IOC_NR_FILE);
const IOC_VMA: u32 =
    _IOWR::<uapi::buildid_vma_query>(uapi::BUILDID_IOC_TYPE, uapi::BUILDID_IOC_NR_VMA);
const IOC_BENCH: u32 =
    _IOWR::<uapi::buildid_bench>(uapi::BUILDID_IOC_TYPE, uapi::BUILDID_IOC_NR_BENCH);

/// The input fields a caller must pass: up to `fd`, `addr` and `iterations`.
const FILE_QUERY_MIN_SIZE: usize = offset_of!(uapi::buildid_file_query, build_id_size);
const VMA_QUERY_MIN_SIZE: usize = offset_of!(uapi::buildid_vma_query, vma_start);
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
const BENCH_MIN_SIZE: usize = offset_of!(uapi::buildid_bench, result);

fn query_file(ptr: usize) -> Result<isize> {
    let mut arg = Arg::<FileQuery>::read(ptr, FILE_QUERY_MIN_SIZE)?;
    let query = &mut arg.value.0;
    // Reserved for extensions, which will give a zero its present meaning.
    if query.reserved != 0 {
        return Err(EINVAL);
    }
    let mode = parse_mode(query.flags)?;
    let file = readable_file(query.fd)?;
    let id = parse_with(&file, mode, Implementation::Rust)?;
    (query.build_id_size, query.build_id) = build_id_fields(&id);
    arg.write_back()?;
    Ok(0)
}

fn query_vma(ptr: usize) -> Result<isize> {
    let mut arg = Arg::<VmaQuery>::read(ptr, VMA_QUERY_MIN_SIZE)?;
    let query = &mut arg.value.0;
    if query.reserved != 0 {
        return Err(EINVAL);
    }
    let lockless = query.flags & FLAG_VMA_LOCKLESS != 0;
    if lockless && query.flags != FLAG_VMA_LOCKLESS {
        return Err(EINVAL);
    }
    let mode = parse_mode(query.flags & FLAG_SLEEPABLE)?;
    let implementation = match query.flags & !FLAG_SLEEPABLE {
        0 | FLAG_VMA_LOCKLESS => Implementation::Rust,
        FLAG_VMA_UNCACHED => Implementation::RustUncached,
        FLAG_VMA_C_REFERENCE => Implementation::C,
        _ => return Err(EINVAL),
    };
    let task: ARef<Task> = match query.pid {
        0 => ARef::from(&*kernel::current!()),
        pid if pid > 0 => Task::find_by_vpid(pid).ok_or(ESRCH)?,
        _ => return Err(EINVAL),
    };
    // The permission check of reading `/proc/<pid>/maps`.
    let mm = MmWithUser::access(&task, PtraceMode::READ_FSCREDS)?;
    let addr = usize::try_from(query.addr).map_err(|_| ENOENT)?;
    if lockless {
        // What the BPF stack helpers get for a frame: no range, the offset of `addr`.
        let (id, offset) = vma_lookup_lockless(&mm, addr)?;
        (query.vma_start, query.vma_end, query.vma_offset) = (0, 0, offset);
        (query.build_id_size, query.build_id) = build_id_fields(&id);
        arg.write_back()?;
        return Ok(0);
    }
    // Parse with the mmap lock dropped: a sleepable parse may read the file.
    let (file, start, end, pgoff) = {
        let mmap = mm.mmap_read_lock_killable()?;
        let vma = mmap.vma_lookup(addr).ok_or(ENOENT)?;
        let file: ARef<File> = vma.vm_file().ok_or(ENOENT)?.into();
        (file, vma.start(), vma.end(), vma.pgoff())
    };
    let id = parse_with(&file, mode, implementation)?;
    query.vma_start = start as u64;
    query.vma_end = end as u64;
    query.vma_offset = (pgoff as u64) << PAGE_SHIFT;
    (query.build_id_size, query.build_id) = build_id_fields(&id);
    arg.write_back()?;
    Ok(0)
}

/// The build ID and file offset of `addr` as the BPF stack helpers look a frame up.
#[cfg(CONFIG_BUILDID_CACHE)]
fn vma_lookup_lockless(mm: &MmWithUser, addr: usize) -> Result<(BuildId, u64)> {
    if !buildid::cache::lockless_vma_enabled() {
        return Err(EAGAIN);
    }
    let (id, range) = buildid::cache::vma_lookup(mm, addr)?;
    Ok((id, range.file_offset(addr)))
}

/// Without the build ID cache, the BPF stack helpers answer no frame without `mmap_lock`.
#[cfg(not(CONFIG_BUILDID_CACHE))]
fn vma_lookup_lockless(_mm: &MmWithUser, _addr: usize) -> Result<(BuildId, u64)> {
    Err(EAGAIN)
}

/// What one benchmark ioctl runs, on what.
#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
struct BenchRun<'a> {
    file: &'a LocalFile,
    implementation: Implementation,
    notes: &'a [u8],
    mm: &'a MmWithUser,
    addr: usize,
    iterations: u32,
}

#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
impl BenchRun<'_> {
    /// Runs mode `MODE` `self.iterations` times: the result of the last run, and the time of
    /// all of them in nanoseconds.
    ///
    /// One instance per mode, with its loop around the inlined run: a `match` on the mode in
    /// every iteration would time an indirect jump too, whose cost under TCG depends on where
    /// its target lies (it once made the sleepable rows' hits a third slower than the nofault
    /// ones, with the same code behind them).
    fn timed<const MODE: u32>(&self) -> Result<(i32, i64)> {
        let mut result = 0;
        let mut elapsed = 0i64;
        let mut done = 0;
        while done < self.iterations {
            // Time batches, and between them let other tasks run and a signal stop the loop.
            let batch = (self.iterations - done).min(BATCH);
            let start = kernel::time::Ktime::ktime_get();
            for _ in 0..batch {
                // Opaque to the optimizer: the loop of a mode that calls nothing
                // (`BENCH_EMPTY`) is still a loop.
                result = core::hint::black_box(self.once::<MODE>()?);
            }
            elapsed += (kernel::time::Ktime::ktime_get() - start).to_ns();
            done += batch;
            if kernel::current!().signal_pending() {
                return Err(EINTR);
            }
            resched();
        }
        Ok((result, elapsed))
    }

    /// One run of mode `MODE`: the ID size or the negative errno.
    #[inline(always)]
    fn once<const MODE: u32>(&self) -> Result<i32> {
        let (file, notes, mm, addr) = (self.file, self.notes, self.mm, self.addr);
        let implementation = self.implementation;
        let result = match (MODE, implementation) {
            // `bench()` checked that lockless lookups are on, as the BPF stack helpers check once
            // for a stack.
            #[cfg(CONFIG_BUILDID_CACHE)]
            (BENCH_VMA_LOCKLESS, Implementation::Rust) => {
                buildid::cache::vma_lookup(mm, addr).map(|(id, _)| id.size())
            }
            #[cfg(not(CONFIG_BUILDID_CACHE))]
            (BENCH_VMA_LOCKLESS, Implementation::Rust) => Err(EAGAIN),
            // A failed lookup is the result of the run, as a failed parse is.
            (BENCH_VMA_TRYLOCK, _) => mm.mmap_read_trylock().ok_or(EAGAIN).and_then(|mmap| {
                let vma = mmap.vma_lookup(addr).ok_or(ENOENT)?;
                parse_with(vma.vm_file().ok_or(ENOENT)?, Mode::Nofault, implementation)
                    .map(|id| id.size())
            }),
            (BENCH_NOFAULT, _) => {
                parse_with(file, Mode::Nofault, implementation).map(|id| id.size())
            }
            (BENCH_SLEEPABLE, _) => {
                parse_with(file, Mode::Sleepable, implementation).map(|id| id.size())
            }
            // `build_id_parse_buf()` does not report the size.
            (BENCH_MEMORY, _) => {
                buildid::testing::parse_buf(notes, implementation).map(|_| BUILD_ID_SIZE_MAX as u32)
            }
            // The loop without a parse, to calibrate: no call into any implementation.
            (BENCH_EMPTY, _) => Ok(0),
            // What a cache hit pays for its read-side critical section, and nothing else.
            (BENCH_RCU_READ_LOCK, _) => {
                drop(kernel::sync::rcu::read_lock());
                Ok(0)
            }
            _ => return Err(EINVAL),
        };
        Ok(match result {
            Ok(size) => size as i32,
            Err(e) => e.to_errno(),
        })
    }
}

#[cfg(CONFIG_SAMPLE_RUST_BUILDID_BENCH)]
fn bench(ptr: usize) -> Result<isize> {
    // SAFETY: `capable` only reads the current task's credentials.
    if !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as i32) } {
        return Err(EPERM);
    }
    let mut arg = Arg::<BenchArg>::read(ptr, BENCH_MIN_SIZE)?;
    let bench = &mut arg.value.0;
    if bench.reserved != 0 {
        return Err(EINVAL);
    }
    let implementation = match bench.flags {
        0 => Implementation::Rust,
        uapi::BUILDID_C_REFERENCE => Implementation::C,
        uapi::BUILDID_UNCACHED => Implementation::RustUncached,
        _ => return Err(EINVAL),
    };
    let mode = bench.mode;
    let iterations = bench.iterations;
    if mode > BENCH_RCU_READ_LOCK || iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(EINVAL);
    }
    let file = readable_file(bench.fd)?;
    let mm = MmWithUser::access(kernel::current!(), PtraceMode::READ_FSCREDS)?;
    let addr = usize::try_from(bench.offset).map_err(|_| EINVAL)?;

    let mut notes: KVec<u8> = KVec::new();
    if mode == BENCH_MEMORY {
        let length = bench.length;
        if length == 0 || length > MAX_MEMORY_LEN {
            return Err(EINVAL);
        }
        let offset = i64::try_from(bench.offset).map_err(|_| EINVAL)?;
        notes.extend_with(length as usize, 0, GFP_KERNEL)?;
        if file.kernel_read(&mut notes, offset)? != notes.len() {
            return Err(EIO);
        }
    }

    #[cfg(CONFIG_BUILDID_CACHE)]
    if mode == BENCH_VMA_LOCKLESS && !buildid::cache::lockless_vma_enabled() {
        return Err(EAGAIN);
    }

    let run = BenchRun {
        file: &file,
        implementation,
        notes: &notes,
        mm: &mm,
        addr,
        iterations,
    };
    let (result, elapsed) = match mode {
        BENCH_NOFAULT => run.timed::<BENCH_NOFAULT>()?,
        BENCH_SLEEPABLE => run.timed::<BENCH_SLEEPABLE>()?,
        BENCH_MEMORY => run.timed::<BENCH_MEMORY>()?,
        BENCH_EMPTY => run.timed::<BENCH_EMPTY>()?,
        BENCH_VMA_LOCKLESS => run.timed::<BENCH_VMA_LOCKLESS>()?,
        BENCH_VMA_TRYLOCK => run.timed::<BENCH_VMA_TRYLOCK>()?,
        BENCH_RCU_READ_LOCK => run.timed::<BENCH_RCU_READ_LOCK>()?,
        _ => return Err(EINVAL),
    };

    bench.result = result;
    bench.total_ns = elapsed as u64;
    arg.write_back()?;
    Ok(0)
}

/// Without `CONFIG_SAMPLE_RUST_BUILDID_BENCH` there is no benchmark ioctl.
#[cfg(not(CONFIG_SAMPLE_RUST_BUILDID_BENCH))]
fn bench(_ptr: usize) -> Result<isize> {
    Err(ENOTTY)
}

struct BuildidDevice;

#[vtable]
impl MiscDevice for BuildidDevice {
    /// No state per open file: each ioctl names what it works on.
    type Ptr = ();

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result {
        Ok(())
    }

    fn ioctl(_device: (), _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            IOC_FILE => query_file(arg),
            IOC_VMA => query_vma(arg),
            IOC_BENCH => bench(arg),
            _ => Err(ENOTTY),
        }
    }
}

/// The device's operations; an open file keeps this module loaded.
static FOPS: MiscDeviceFops<BuildidDevice> = MiscDeviceFops::new(&THIS_MODULE);

struct RustBuildid {
    _device: Pin<KBox<MiscDeviceRegistration<BuildidDevice>>>,
}

impl kernel::Module for RustBuildid {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        // Anyone may open the device: what each ioctl allows is checked per call.
        let options = MiscDeviceOptions {
            name: c_str!("buildid"),
        };
        let device = KBox::pin_init(
            MiscDeviceRegistration::register_with_fops(options, 0o444, &FOPS),
            GFP_KERNEL,
        )?;
        Ok(Self { _device: device })
    }
}
