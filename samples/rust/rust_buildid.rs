// SPDX-License-Identifier: GPL-2.0

//! Rust build ID sample: `/dev/buildid`.
//!
//! The ioctls return the ELF build ID of an open file, or of the file mapped at an address of a
//! process, with the Rust implementation of `lib/buildid` (`kernel::buildid`), and time the
//! parser, Rust or the C reference, for benchmarks.
//!
//! Every argument is a struct that starts with its own size (`u32`), copied the
//! `copy_struct_from_user()` way: a caller built against an older, shorter struct gets only
//! the fields it knows, a newer, longer one is accepted if the bytes this driver does not know
//! are zero (`E2BIG` otherwise). Shorter than the first version's required fields is `EINVAL`,
//! and so are unknown flags. The ioctl number is matched on type `0xb1` and number only, so the
//! size encoded in it does not matter. All fields are native-endian.
//!
//! `BUILDID_IOC_FILE` (nr 1): `{ u32 size; u32 flags; s32 fd; u32 build_id_size (out);
//! u8 build_id[20] (out); u32 reserved; }`, at least 12 bytes. Flag 1: sleepable parse (may
//! read the file); without it, the page cache only. `fd` must be open for reading in the
//! caller (`EBADF`).
//!
//! `BUILDID_IOC_VMA` (nr 2): `{ u32 size; u32 flags; s32 pid; u32 build_id_size (out);
//! u64 addr; u64 vma_start, vma_end, vma_offset (out); u8 build_id[20] (out); u32 reserved; }`,
//! at least 24 bytes. Flag 1 as above; flag 2: the Rust parser without the build ID cache; flag
//! 4: the C reference (`EOPNOTSUPP` without `CONFIG_BUILDID_C_REFERENCE`); 2 and 4 exclude each
//! other. The file parsed is the VMA's `vm_file`, as perf and BPF see it (for overlayfs, the
//! file of the layer below). `pid` 0 is the caller's process; others need the permission of
//! reading `/proc/<pid>/maps` (`PTRACE_MODE_READ_FSCREDS`). No VMA or no file at `addr` is
//! `ENOENT`.
//!
//! `BUILDID_IOC_BENCH` (nr 3, `CAP_SYS_ADMIN`): `{ u32 size; u32 flags; s32 fd; u32 mode;
//! u32 iterations; s32 result (out); u64 offset; u32 length; u32 reserved; u64 total_ns (out);
//! }`, at least 20 bytes. Runs one entry point `iterations` times (at most 10^7): mode 0
//! nofault, 1 sleepable, 2 memory (`build_id_parse_buf()` on the `length` bytes, at most
//! 64 KiB, at `offset` of the file, read once beforehand), 3 nothing (the loop's own cost,
//! `result` 0). Flag 1: the C reference
//! (`CONFIG_BUILDID_C_REFERENCE`, else `EOPNOTSUPP`); flag 2: the Rust parser without the build
//! ID cache (without either flag, a file parse consults the cache when it is on, as every caller
//! of the kernel does; the flags are exclusive). `result` is the build ID size of the last
//! run or its negative errno. The loop yields the CPU every 256 parses, and a pending signal
//! ends it with `EINTR`.
//!
//! A parse that fails returns the parser's error (`EINVAL` for no build ID, `EFAULT` for data
//! the nofault mode did not find cached).

use kernel::{
    alloc::flags::GFP_KERNEL,
    bindings,
    buildid::{self, BuildId, Mode, BUILD_ID_SIZE_MAX},
    c_str,
    fs::file::File,
    ioctl::{_IOC_NR, _IOC_TYPE},
    miscdevice::{MiscDevice, Registration},
    mm::MmUser,
    prelude::*,
    time::Ktime,
    types::ARef,
    uaccess::UserSlice,
};

module! {
    type: RustBuildid,
    name: "rust_buildid",
    author: "Rust for Linux Contributors",
    description: "Rust build ID sample: /dev/buildid",
    license: "GPL",
}

const IOC_TYPE: u32 = 0xb1;
const NR_FILE: u32 = 1;
const NR_VMA: u32 = 2;
const NR_BENCH: u32 = 3;

const FLAG_SLEEPABLE: u32 = 1;
const FLAG_C_REFERENCE: u32 = 1;
const FLAG_UNCACHED: u32 = 2;
const FLAG_VMA_UNCACHED: u32 = 2;
const FLAG_VMA_C_REFERENCE: u32 = 4;

const MODE_NOFAULT: u32 = 0;
const MODE_SLEEPABLE: u32 = 1;
const MODE_MEMORY: u32 = 2;
const MODE_EMPTY: u32 = 3;

const MAX_ITERATIONS: u32 = 10_000_000;
const MAX_MEMORY_LEN: u32 = 64 * 1024;
/// Longest argument struct accepted; the tail past what this driver knows must be zero.
const MAX_ARG_SIZE: usize = 4096;

/// An argument struct as this driver knows it, as raw native-endian bytes.
struct Arg<const N: usize> {
    bytes: [u8; N],
    /// The size the caller gave: how much to copy back.
    user_size: usize,
    ptr: usize,
}

impl<const N: usize> Arg<N> {
    /// Copies the struct at `ptr` in, the `copy_struct_from_user()` way.
    fn read(ptr: usize, min_size: usize) -> Result<Self> {
        let user_size = UserSlice::new(ptr, 4).reader().read::<u32>()? as usize;
        if user_size < min_size {
            return Err(EINVAL);
        }
        if user_size > MAX_ARG_SIZE {
            return Err(E2BIG);
        }
        let mut reader = UserSlice::new(ptr, user_size).reader();
        let mut bytes = [0u8; N];
        let known = user_size.min(N);
        reader.read_slice(&mut bytes[..known])?;
        let mut tail = [0u8; 64];
        while !reader.is_empty() {
            let chunk = reader.len().min(tail.len());
            reader.read_slice(&mut tail[..chunk])?;
            if tail[..chunk].iter().any(|&b| b != 0) {
                return Err(E2BIG);
            }
        }
        Ok(Self {
            bytes,
            user_size,
            ptr,
        })
    }

    /// Copies back the fields the caller's struct has room for.
    fn write_back(&self) -> Result {
        let len = self.user_size.min(N);
        UserSlice::new(self.ptr, len)
            .writer()
            .write_slice(&self.bytes[..len])
    }

    fn u32_at(&self, offset: usize) -> u32 {
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.bytes[offset..offset + 4]);
        u32::from_ne_bytes(b)
    }

    fn u64_at(&self, offset: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes[offset..offset + 8]);
        u64::from_ne_bytes(b)
    }

    fn set_u32(&mut self, offset: usize, value: u32) {
        self.bytes[offset..offset + 4].copy_from_slice(&value.to_ne_bytes());
    }

    fn set_u64(&mut self, offset: usize, value: u64) {
        self.bytes[offset..offset + 8].copy_from_slice(&value.to_ne_bytes());
    }

    fn set_build_id(&mut self, size_offset: usize, id_offset: usize, id: &BuildId) {
        let data = id.as_bytes();
        self.set_u32(size_offset, data.len() as u32);
        let field = &mut self.bytes[id_offset..id_offset + BUILD_ID_SIZE_MAX];
        field.fill(0);
        field[..data.len()].copy_from_slice(data);
    }
}

/// Parses timed between two chances for other tasks to run.
const BATCH: u32 = 256;

/// `cond_resched()`: on a kernel without preemption a benchmark of millions of parses would
/// otherwise keep the CPU for seconds.
fn resched() {
    #[cfg(any(not(CONFIG_PREEMPTION), CONFIG_PREEMPT_DYNAMIC))]
    // SAFETY: Called from the ioctl, in process context with no lock held, where sleeping is
    // allowed.
    unsafe {
        bindings::__cond_resched()
    };
}

/// `kernel::error::code` has no `EOPNOTSUPP` in this tree.
#[cfg(not(CONFIG_BUILDID_C_REFERENCE))]
fn eopnotsupp() -> Error {
    Error::from_errno(-(bindings::EOPNOTSUPP as i32))
}

/// The code that parses, as the benchmark and the VMA query's flags choose it.
#[derive(Clone, Copy)]
enum Implementation {
    /// `kernel::buildid` as the kernel's callers reach it, through the cache when it is on.
    Rust,
    /// `kernel::buildid` without the cache.
    RustUncached,
    /// The C reference of `lib/buildid.c`.
    C,
}

/// Parses `file` with `implementation`.
fn parse_with(file: &File, mode: Mode, implementation: Implementation) -> Result<BuildId> {
    match implementation {
        Implementation::Rust => buildid::parse_file(file, mode),
        Implementation::RustUncached => buildid::parse_file_uncached(file, mode),
        #[cfg(CONFIG_BUILDID_C_REFERENCE)]
        Implementation::C => buildid::reference::parse_file(file, mode),
        #[cfg(not(CONFIG_BUILDID_C_REFERENCE))]
        Implementation::C => Err(eopnotsupp()),
    }
}

fn parse_mode(flags: u32) -> Result<Mode> {
    match flags {
        0 => Ok(Mode::Nofault),
        FLAG_SLEEPABLE => Ok(Mode::Sleepable),
        _ => Err(EINVAL),
    }
}

/// The file at `fd` of the caller, if it is open for reading.
fn readable_file(fd: u32) -> Result<ARef<File>> {
    let file = File::fget(fd)?;
    if file.mode() & bindings::FMODE_READ == 0 {
        return Err(EBADF);
    }
    Ok(file)
}

fn query_file(ptr: usize) -> Result<isize> {
    let mut arg = Arg::<40>::read(ptr, 12)?;
    let mode = parse_mode(arg.u32_at(4))?;
    let file = readable_file(arg.u32_at(8))?;
    let id = buildid::parse_file(&file, mode)?;
    arg.set_build_id(12, 16, &id);
    arg.write_back()?;
    Ok(0)
}

fn query_vma(ptr: usize) -> Result<isize> {
    let mut arg = Arg::<72>::read(ptr, 24)?;
    let flags = arg.u32_at(4);
    let mode = parse_mode(flags & FLAG_SLEEPABLE)?;
    let implementation = match flags & !FLAG_SLEEPABLE {
        0 => Implementation::Rust,
        FLAG_VMA_UNCACHED => Implementation::RustUncached,
        FLAG_VMA_C_REFERENCE => Implementation::C,
        _ => return Err(EINVAL),
    };
    let mm = match arg.u32_at(8) as i32 {
        0 => MmUser::current()?,
        pid if pid > 0 => MmUser::access(pid)?,
        _ => return Err(EINVAL),
    };
    let vma = mm.file_at(arg.u64_at(16))?;
    let id = parse_with(&vma.file, mode, implementation)?;
    arg.set_u64(24, vma.start);
    arg.set_u64(32, vma.end);
    arg.set_u64(40, vma.pgoff << bindings::PAGE_SHIFT);
    arg.set_build_id(12, 48, &id);
    arg.write_back()?;
    Ok(0)
}

/// One parse as the benchmark runs it: the ID size or the negative errno.
fn bench_once(file: &File, mode: u32, implementation: Implementation, notes: &[u8]) -> Result<i32> {
    let result = match (mode, implementation) {
        (MODE_NOFAULT, _) => parse_with(file, Mode::Nofault, implementation).map(|id| id.size()),
        (MODE_SLEEPABLE, _) => {
            parse_with(file, Mode::Sleepable, implementation).map(|id| id.size())
        }
        (MODE_MEMORY, Implementation::Rust | Implementation::RustUncached) => {
            buildid::parse_buf(notes).map(|id| id.size())
        }
        #[cfg(CONFIG_BUILDID_C_REFERENCE)]
        (MODE_MEMORY, Implementation::C) => {
            buildid::reference::parse_buf(notes).map(|_| BUILD_ID_SIZE_MAX as u32)
        }
        #[cfg(not(CONFIG_BUILDID_C_REFERENCE))]
        (MODE_MEMORY, Implementation::C) => return Err(eopnotsupp()),
        // The loop without a parse, to calibrate: no call into any implementation.
        (MODE_EMPTY, _) => Ok(0),
        _ => return Err(EINVAL),
    };
    Ok(match result {
        Ok(size) => size as i32,
        Err(e) => e.to_errno(),
    })
}

fn bench(ptr: usize) -> Result<isize> {
    // SAFETY: `capable` only reads the current task's credentials.
    if !unsafe { bindings::capable(bindings::CAP_SYS_ADMIN as i32) } {
        return Err(EPERM);
    }
    let mut arg = Arg::<48>::read(ptr, 20)?;
    let implementation = match arg.u32_at(4) {
        0 => Implementation::Rust,
        FLAG_C_REFERENCE => Implementation::C,
        FLAG_UNCACHED => Implementation::RustUncached,
        _ => return Err(EINVAL),
    };
    let mode = arg.u32_at(12);
    let iterations = arg.u32_at(16);
    if mode > MODE_EMPTY || iterations == 0 || iterations > MAX_ITERATIONS {
        return Err(EINVAL);
    }
    let file = readable_file(arg.u32_at(8))?;

    let mut notes: KVec<u8> = KVec::new();
    if mode == MODE_MEMORY {
        let length = arg.u32_at(32);
        if length == 0 || length > MAX_MEMORY_LEN {
            return Err(EINVAL);
        }
        let offset = i64::try_from(arg.u64_at(24)).map_err(|_| EINVAL)?;
        notes.extend_with(length as usize, 0, GFP_KERNEL)?;
        if file.kernel_read(&mut notes, offset)? != notes.len() {
            return Err(EIO);
        }
    }

    let mut result = 0;
    let mut elapsed = 0i64;
    let mut done = 0;
    while done < iterations {
        // Time batches, and between them let other tasks run and a signal stop the loop.
        let batch = (iterations - done).min(BATCH);
        let start = Ktime::ktime_get();
        for _ in 0..batch {
            result = bench_once(&file, mode, implementation, &notes)?;
        }
        elapsed += (Ktime::ktime_get() - start).to_ns();
        done += batch;
        if kernel::current!().signal_pending() {
            return Err(EINTR);
        }
        resched();
    }

    arg.set_u32(20, result as u32);
    arg.set_u64(40, elapsed as u64);
    arg.write_back()?;
    Ok(0)
}

struct BuildidDevice;

impl MiscDevice for BuildidDevice {
    fn ioctl(_file: &File, cmd: u32, arg: usize) -> Result<isize> {
        if _IOC_TYPE(cmd) != IOC_TYPE {
            return Err(ENOTTY);
        }
        match _IOC_NR(cmd) {
            NR_FILE => query_file(arg),
            NR_VMA => query_vma(arg),
            NR_BENCH => bench(arg),
            _ => Err(ENOTTY),
        }
    }
}

struct RustBuildid {
    _device: Pin<KBox<Registration<BuildidDevice>>>,
}

impl kernel::Module for RustBuildid {
    fn init(module: &'static ThisModule) -> Result<Self> {
        // Anyone may open the device: what each ioctl allows is checked per call.
        let device = KBox::pin_init(
            Registration::register(c_str!("buildid"), 0o444, module),
            GFP_KERNEL,
        )?;
        Ok(Self { _device: device })
    }
}
