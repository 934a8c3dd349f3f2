// SPDX-License-Identifier: GPL-2.0

//! The build ID cache: build IDs of ELF files keyed by inode, readable from any context.
//!
//! A nofault parse fails as soon as the page cache lacks the folio with the ELF header, the
//! program headers or the note; this cache remembers what a parse found, so that nofault
//! callers (perf `MMAP2` records, BPF stack maps, from NMI too) still get the build ID.
//!
//! # Lookups
//!
//! The table is an array of buckets of [`WAYS`] slots, each slot a pointer to an immutable
//! [`Entry`]. A lookup hashes the inode address, loads the bucket's slots once each under
//! `rcu_read_lock()`, and compares keys: one pass, no lock, no retry, no allocation, so it may
//! run in NMI while a writer on the same CPU is in the middle of an update. A writer publishes
//! a complete entry with one release store and removes one with one store; the reader sees the
//! old or the new pointer, and a removed entry is freed after an RCU grace period. A hit only
//! sets the entry's `referenced` flag, which CLOCK replacement clears.
//!
//! # Fills
//!
//! Only where sleeping is allowed, and only on demand: by sleepable parses ([`parse_and_fill`]),
//! and by the worker that nofault misses queue (`lib/buildid_cache.c`). Nothing is read for the
//! cache at `mmap()`: a system where nobody asks for build IDs pays for no parse. Writers
//! serialize on one spinlock, which is never held across an allocation, so inode eviction can
//! take it from reclaim.
//!
//! # Validity
//!
//! An entry is filled, and served, only while the inode's content can change in no way that
//! the cache does not see ([`may_cache`]): nobody holds write access (which `write()`,
//! `truncate()` and writable shared mappings of ordinary files need) and no shared mapping may
//! write to its pages. Files of internal mounts (memfd, SysV shared memory) are opened for write
//! without write access, so they are cached only while sealed against writes. An entry is dropped
//! when write access is granted ([`forget`] from `do_dentry_open()` and `vfs_truncate()`), and
//! served only while the change attribute (where the file system keeps one), size and change
//! time still match what was read before the parse. A fill gives up if anything changed during
//! its parse, if the file's data moved to another inode (an overlayfs copy-up), if the cache was
//! turned off meanwhile, or if a read of the parse failed: "no build ID" is cached only when the
//! parse read everything it asked for. Entries are dropped when their inode is freed, so an
//! inode allocated at the same address never finds its predecessor's entry. Files of FUSE and
//! cluster file systems are not cached at all ([`fs_coherent`]): their data can change, and their
//! page cache with it, while the stamp stays as it was.
//! `Documentation/core-api/buildid.rst` lists every way content can change and what catches it,
//! and which file systems are cached ("Coherence").

use crate::{
    elf::{self, BuildId, Fetched, ReadAt},
    file::{self, Mode},
    freader::{PageCache, SleepableReader},
};
use core::{
    marker::PhantomData,
    mem::MaybeUninit,
    pin::Pin,
    ptr::{self, addr_of_mut},
    sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering},
};
use kernel::{
    alloc::{flags::GFP_KERNEL, KBox, KVVec},
    bindings,
    error::{code::*, Error, Result},
    folio::FolioView,
    fs::{file::LocalFile, inode::Inode},
    init::InPlaceInit,
    mm::MmWithUser,
    new_mutex, new_spinlock, pin_init,
    prelude::pin_data,
    sync::{rcu, Mutex, SpinLock},
};

/// Slots per bucket: one cache line of pointers on 64-bit.
const WAYS: usize = 8;

/// `GOLDEN_RATIO_64` of `<linux/hash.h>`, for `hash_64()`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Counters of `lib/buildid_cache.c`.
pub(crate) type Stat = bindings::buildid_cache_stat;
pub(crate) use bindings::{
    buildid_cache_stat_BUILDID_CACHE_DEFERRED_FILL as DEFERRED_FILL,
    buildid_cache_stat_BUILDID_CACHE_EVICTION as EVICTION,
    buildid_cache_stat_BUILDID_CACHE_FILL as FILL,
    buildid_cache_stat_BUILDID_CACHE_FILL_RACED as FILL_RACED,
    buildid_cache_stat_BUILDID_CACHE_HIT as HIT, buildid_cache_stat_BUILDID_CACHE_MISS as MISS,
    buildid_cache_stat_BUILDID_CACHE_REPLACEMENT as REPLACEMENT,
};

/// Increments this CPU's counter of `stat`. Usable in any context, NMI included.
fn count(stat: Stat) {
    // SAFETY: An FFI call that only increments a per-CPU counter; usable in any context.
    unsafe { bindings::buildid_cache_count(stat) };
}

/// Counts a lookup as a hit or a miss, with `CONFIG_BUILDID_CACHE_STATS` only: every hit would
/// pay for the call, a noticeable share of its time.
#[inline(always)]
fn count_lookup(_stat: Stat) {
    #[cfg(CONFIG_BUILDID_CACHE_STATS)]
    count(_stat);
}

/// What a parse found for one inode, and what the inode looked like before the parse.
///
/// # Invariants
///
/// Only `referenced` changes once the entry is reachable from a table. An entry removed from
/// the published table is freed only after an RCU grace period.
#[repr(C)]
struct Entry {
    /// First, so that `call_rcu()`'s callback can find the entry ([`retire`]).
    rcu: bindings::callback_head,
    key: usize,
    /// `None` for a file without a build ID.
    id: Option<BuildId>,
    /// The content the parse read.
    content: Content,
    /// The inode is on an internal mount, and may be served only while writable mappings of
    /// it are denied ([`Stamp::write_protected`]).
    internal: bool,
    /// Set by hits, cleared by the CLOCK hand.
    referenced: AtomicBool,
}

// Entries come from `kmalloc-128`; `Documentation/core-api/buildid.rst` counts on it.
const _: () = assert!(core::mem::size_of::<Entry>() <= 128);

impl Entry {
    /// Whether the entry still describes `inode`'s content. Usable in any context.
    ///
    /// [`may_cache`] without its superblock flags, which the fill recorded (`internal`, and
    /// whether a change attribute is in `content`): every hit saves their loads. The flags are
    /// set at mount time, and an entry compares the change attribute it recorded even if a
    /// remount stopped the file system keeping it; size and change time are compared in any
    /// case.
    #[inline]
    fn describes(&self, inode: &Inode) -> bool {
        let now = Stamp::read(inode);
        now.write_protected(self.internal) && now.shows(&self.content)
    }

    /// Marks the entry recently used, without writing its cache line if it already is.
    #[inline]
    fn touch(&self) {
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
        }
    }
}

/// Whether every change to `inode`'s content goes through something the cache sees, at this
/// instant ([`Stamp::may_cache`]). Usable in any context, NMI included.
fn may_cache(inode: &Inode) -> bool {
    fs_coherent(inode)
        && Stamp::read(inode).may_cache(inode.on_internal_mount(), inode.has_iversion())
}

/// Whether the stamp of `inode` changes with every change of its content that the page cache
/// sees: not on FUSE or cluster file systems (`buildid_cache_fs_coherent()`). A property of the
/// superblock, so checked by fills and not by hits. Usable in any context, NMI included.
fn fs_coherent(inode: &Inode) -> bool {
    // SAFETY: `inode` is valid for the call and pins its superblock; the callee only loads the
    // superblock's magic number.
    unsafe { bindings::buildid_cache_fs_coherent(inode.as_ptr()) }
}

/// Whether `file` is a memfd sealed with `F_SEAL_WRITE`. Seals are never removed, so its writable
/// mappings are denied for good. Process context.
fn sealed_against_writes(file: &LocalFile) -> bool {
    // SAFETY: `file` is valid for the call; the callee only reads the file's seals.
    unsafe { bindings::buildid_cache_sealed_against_writes(file.as_ptr()) }
}

/// What an inode's content looked like to a parse: what an entry and a fill record, and what
/// a hit or the end of a fill compares ([`Stamp::shows`]).
#[derive(Clone, Copy)]
struct Content {
    /// The change attribute, where the file system keeps one.
    iversion: Option<u64>,
    size: i64,
    ctime_sec: i64,
    ctime_nsec: i64,
}

/// One read of everything the cache looks at in an inode, by C with the inode's own accessors
/// (`buildid_cache_inode_stamp()`), whose layouts and encodings are the VFS's: one call per hit.
struct Stamp(bindings::buildid_inode_stamp);

impl Stamp {
    /// Reads `inode`'s stamp. Usable in any context, NMI included.
    #[inline]
    fn read(inode: &Inode) -> Self {
        // Not zeroed first: the callee writes every field, and a hit is short enough for the
        // stores to show.
        let mut stamp = MaybeUninit::<bindings::buildid_inode_stamp>::uninit();
        // SAFETY: `inode` is valid for the call, and `stamp` for writes; the callee only loads
        // fields of the inode and its mapping.
        unsafe { bindings::buildid_cache_inode_stamp(inode.as_ptr(), stamp.as_mut_ptr()) };
        // SAFETY: `buildid_cache_inode_stamp()` assigns every field of the struct.
        Self(unsafe { stamp.assume_init() })
    }

    /// Whether nobody may change the content unseen: nobody holds write access (which
    /// `write()`, `truncate()` and writable shared mappings of ordinary files need), no shared
    /// mapping may write to its pages, and for a file of an `internal` mount (memfd, SysV shared
    /// memory, hugetlbfs' own files: opened for write without write access) writable mappings
    /// are denied.
    #[inline]
    fn write_protected(&self, internal: bool) -> bool {
        // Comparisons of loaded values: every hit passes all of them, without a branch each.
        self.0.write_count <= 0
            && self.0.mmap_writable <= 0
            && (!internal || self.0.mmap_writable < 0)
    }

    /// Whether every change to the content goes through something the cache sees, at this
    /// instant: [`Self::write_protected`], and a file of an internal mount must also have a
    /// change attribute (`iversion_kept`), which catches the truncations that sealing allows. A
    /// fill also wants the denial to be for good: the memfd carries `F_SEAL_WRITE`
    /// ([`sealed_against_writes`]); while the seal is being added, writable mappings are denied
    /// but may be allowed again.
    #[inline]
    fn may_cache(&self, internal: bool, iversion_kept: bool) -> bool {
        self.write_protected(internal) && (!internal || iversion_kept)
    }

    /// Whether the content is as `then` recorded it: size, change time and, where one was
    /// recorded, change attribute.
    #[inline]
    fn shows(&self, then: &Content) -> bool {
        then.iversion.map_or(true, |recorded| recorded == self.0.iversion)
            && self.0.size == then.size
            && self.0.ctime_sec == then.ctime_sec
            // `long` is at most 64 bits on Linux targets: the conversion is lossless.
            && self.0.ctime_nsec as i64 == then.ctime_nsec
    }

    /// The content as this stamp shows it, with the change attribute `iversion`.
    fn content(&self, iversion: Option<u64>) -> Content {
        Content {
            iversion,
            size: self.0.size,
            ctime_sec: self.0.ctime_sec,
            // As in `shows()`.
            ctime_nsec: self.0.ctime_nsec as i64,
        }
    }
}

/// The `call_rcu()` callback of [`retire`].
///
/// # Safety
///
/// `head` is the `rcu` field of an entry passed to [`retire`], after its grace period.
unsafe extern "C" fn free_entry(head: *mut bindings::callback_head) {
    // SAFETY: `head` is the first field of a `repr(C)` `Entry` that `retire` leaked from a
    // `KBox`, and the grace period has ended, so no reader can still reach it.
    drop(unsafe { KBox::from_raw(head.cast::<Entry>()) });
}

/// Frees `entry`, which no published table holds any more, after an RCU grace period. Does
/// not allocate or sleep.
///
/// # Safety
///
/// `entry` comes from `KBox::into_raw` and is reachable from no published table.
unsafe fn retire(entry: *mut Entry) {
    // SAFETY: `entry` is valid per the caller; `call_rcu` frees it once the readers that may
    // have loaded it before it was unpublished are done.
    unsafe { bindings::call_rcu(addr_of_mut!((*entry).rcu), Some(free_entry)) };
}

/// `(1 << bits)` buckets of [`WAYS`] slots.
///
/// # Invariants
///
/// `slots.len() == WAYS << bits`. Non-null slots point to entries leaked from `KBox`es.
struct Table {
    bits: u32,
    slots: KVVec<AtomicPtr<Entry>>,
}

impl Table {
    /// A table for `max_entries` entries, with buckets at most half full on average.
    fn new(max_entries: usize) -> Result<KBox<Self>> {
        let buckets = (max_entries.saturating_mul(2) / WAYS)
            .max(1)
            .checked_next_power_of_two()
            .ok_or(EINVAL)?;
        let len = buckets.checked_mul(WAYS).ok_or(EINVAL)?;
        let mut slots = KVVec::with_capacity(len, GFP_KERNEL)?;
        for _ in 0..len {
            slots.push(AtomicPtr::new(ptr::null_mut()), GFP_KERNEL)?;
        }
        // INVARIANT: `len` is `WAYS` times `buckets`, a power of two.
        Ok(KBox::new(
            Self {
                bits: buckets.trailing_zeros(),
                slots,
            },
            GFP_KERNEL,
        )?)
    }

    #[inline]
    fn bucket(&self, key: usize) -> &[AtomicPtr<Entry>] {
        let index = match self.bits {
            0 => 0,
            // `hash_64()`: the top `bits` bits of the product.
            bits => ((key as u64).wrapping_mul(GOLDEN_RATIO_64) >> (64 - bits)) as usize,
        };
        let start = index.wrapping_mul(WAYS);
        self.slots.get(start..start + WAYS).unwrap_or(&[])
    }

    /// The slot holding `key`'s entry, if any.
    #[inline]
    fn find(&self, key: usize) -> Option<(&AtomicPtr<Entry>, &Entry)> {
        self.bucket(key).iter().find_map(|slot| {
            let entry = slot.load(Ordering::Acquire);
            // SAFETY: A non-null slot of a table points to a live entry; the caller holds the
            // RCU read lock or the writer lock, so it is not freed meanwhile (type invariants
            // of `Table` and `Entry`).
            let entry = unsafe { entry.as_ref() }?;
            (entry.key == key).then_some((slot, entry))
        })
    }
}

/// The published table; null while the cache is off.
static TABLE: AtomicPtr<Table> = AtomicPtr::new(ptr::null_mut());

/// The number of entries in the published table, exactly: stored from [`Writer::entries`]
/// under the writers' lock whenever the table changes. The counters file reads it, and
/// [`forget`] relies on a 0 meaning that the table held no entry when it was stored.
static ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// The number of writers inside the writers' lock; the KUnit suite checks that NMI lookups
/// land in the middle of updates.
static UPDATING: AtomicU32 = AtomicU32::new(0);

/// The writers' lock held, counted in [`UPDATING`].
struct Updating<'a>(
    kernel::sync::lock::Guard<'a, Writer, kernel::sync::lock::spinlock::SpinLockBackend>,
);

impl<'a> Updating<'a> {
    fn lock(lock: &'a SpinLock<Writer>) -> Self {
        let guard = lock.lock();
        UPDATING.fetch_add(1, Ordering::Relaxed);
        Self(guard)
    }
}

impl Drop for Updating<'_> {
    fn drop(&mut self) {
        UPDATING.fetch_sub(1, Ordering::Relaxed);
    }
}

impl core::ops::Deref for Updating<'_> {
    type Target = Writer;

    fn deref(&self) -> &Writer {
        &self.0
    }
}

impl core::ops::DerefMut for Updating<'_> {
    fn deref_mut(&mut self) -> &mut Writer {
        &mut self.0
    }
}

/// The number of writers inside the writers' lock at this instant; any context.
pub(crate) fn updates_in_progress() -> u32 {
    UPDATING.load(Ordering::Relaxed)
}

/// Bumped under the writers' lock whenever the cache is turned off: the hooks that drop entries
/// do not run while it is off, so a fill that began before must not insert.
static EPOCH: AtomicUsize = AtomicUsize::new(0);

/// The number of fills between their first look at the inode and their insert. Write-access
/// grants are counted (below) only while it is not zero.
static FILLS: AtomicUsize = AtomicUsize::new(0);

/// Write-access grants by inode hash: a fill that saw one of these change during its parse
/// does not insert, whatever the file system's timestamps and change attribute say.
static WRITE_GRANTS: [AtomicU32; 64] = [const { AtomicU32::new(0) }; 64];

fn write_grants(key: usize) -> &'static AtomicU32 {
    let index = ((key as u64).wrapping_mul(GOLDEN_RATIO_64) >> 58) as usize;
    &WRITE_GRANTS[index % WRITE_GRANTS.len()]
}

/// At most this many slots are looked at for a victim per insert, so that the writers' lock,
/// which inode eviction takes from reclaim, is held for a bounded time at any size.
const CLOCK_SCAN_MAX: usize = 64;

/// The share of the entries that may say "no build ID": every lookup of a mapped file that is
/// not ELF makes one, and they must not push out the build IDs in use.
const NEGATIVE_SHARE: usize = 8;

fn negative_cap(max_entries: usize) -> usize {
    (max_entries / NEGATIVE_SHARE).max(1)
}

/// The smallest size limit [`set_max_entries`] takes.
pub(crate) const MIN_ENTRIES: usize = 16;
/// The largest size limit [`set_max_entries`] takes.
pub(crate) const MAX_ENTRIES: usize = 1 << 20;
/// The size limit at boot.
const DEFAULT_MAX_ENTRIES: usize = 4096;

/// State of the writers, who serialize on [`writer`]'s lock.
struct Writer {
    /// The number of entries in the table; every change of it is stored to [`ENTRIES`] before
    /// the lock is dropped.
    entries: usize,
    /// How many of the entries say "no build ID".
    negatives: usize,
    /// The size limit: the one record of it, changed only by [`switch`].
    max_entries: usize,
    /// The CLOCK hand: the next slot the replacement sweep looks at.
    hand: usize,
}

/// The cache's locks, made by [`locks_or_make`] and never freed.
#[pin_data]
struct Locks {
    /// Held across a change of the settings: whether the table exists ([`TABLE`]), the size
    /// limit ([`Writer::max_entries`]) and the hooks' static key. May sleep.
    #[pin]
    settings: Mutex<()>,
    /// The writers' lock: never held across an allocation, as inode eviction takes it from
    /// reclaim.
    #[pin]
    writer: SpinLock<Writer>,
}

/// Null until [`locks_or_make`] made the locks.
static LOCKS: AtomicPtr<Locks> = AtomicPtr::new(ptr::null_mut());

fn locks() -> Option<&'static Locks> {
    // SAFETY: `LOCKS` is null or points to the locks `locks_or_make` published, never freed.
    unsafe { LOCKS.load(Ordering::Acquire).as_ref() }
}

fn writer() -> Option<&'static SpinLock<Writer>> {
    locks().map(|locks| &locks.writer)
}

/// Whether the cache is on: its table exists.
pub(crate) fn is_on() -> bool {
    !TABLE.load(Ordering::Relaxed).is_null()
}

/// Whether the hooks that drop entries run: only then may a fill begin.
fn hooks_on() -> bool {
    // SAFETY: An FFI call that reads a static key.
    unsafe { bindings::buildid_cache_hooks_enabled() }
}

/// Runs `f` on the published table under the RCU read lock; `None` while the cache is off.
// Always inlined: it is the whole of every hit path.
#[inline(always)]
fn with_table<R>(f: impl FnOnce(&Table) -> R) -> Option<R> {
    with_table_under(&rcu::read_lock(), f)
}

/// [`with_table`] under the RCU read lock that `_rcu` holds: a caller that holds it already
/// saves the two calls of taking it again.
#[inline(always)]
fn with_table_under<R>(_rcu: &rcu::Guard, f: impl FnOnce(&Table) -> R) -> Option<R> {
    // SAFETY: A published table is freed only after a grace period following its replacement,
    // and `_rcu` holds the RCU read lock.
    let table = unsafe { TABLE.load(Ordering::Acquire).as_ref() }?;
    Some(f(table))
}

/// Runs `f` on the entry for `key` of the published table, under the RCU read lock.
#[inline]
fn with_entry<R>(key: usize, f: impl FnOnce(&Entry) -> R) -> Option<R> {
    with_table(|table| table.find(key).map(|(_, entry)| f(entry))).flatten()
}

/// Looks `file`'s build ID up: `None` while the cache is off or on a miss, else what a parse
/// found (a build ID, or [`EINVAL`] for a file without one).
///
/// Takes no lock, never sleeps, never waits for a writer: usable in any context, NMI included.
// Always inlined: it is the whole of a hit, on its callers' hot paths.
#[inline(always)]
pub(crate) fn lookup(file: &LocalFile, mode: Mode) -> Option<Result<BuildId>> {
    lookup_key(match mode {
        Mode::Sleepable => file.data_inode(),
        Mode::Nofault => file.data_inode_nofault(),
    })
}

/// [`lookup`] of `inode`; `None` stands for a file without a data inode, which misses.
// Always inlined: every hit runs it, and its callers are the whole of their own hit paths.
#[inline(always)]
fn lookup_key(inode: Option<&Inode>) -> Option<Result<BuildId>> {
    lookup_key_under(&rcu::read_lock(), inode)
}

/// [`lookup_key`] under the RCU read lock that `rcu` holds.
#[inline(always)]
fn lookup_key_under(rcu: &rcu::Guard, inode: Option<&Inode>) -> Option<Result<BuildId>> {
    // One load of the table tells "off" from a miss.
    let hit = with_table_under(rcu, |table| {
        let inode = inode?;
        let (_, entry) = table.find(inode.key())?;
        entry.describes(inode).then(|| {
            entry.touch();
            entry.id
        })
    })?;
    count_lookup(if hit.is_some() { HIT } else { MISS });
    hit.map(|id| id.ok_or(EINVAL))
}

/// Whether the cache holds an entry for `file` that describes its content; counts nothing.
pub(crate) fn contains(file: &LocalFile) -> bool {
    file.data_inode().is_some_and(|inode| {
        with_entry(inode.key(), |entry| entry.describes(inode)).unwrap_or(false)
    })
}

/// Picks the entry to replace among `slots`, CLOCK style, starting at `hand`: the first one
/// not referenced since the hand last passed, clearing the flags it passes. Looks at most at
/// [`CLOCK_SCAN_MAX`] slots (and each at most twice); if all of those were referenced, the
/// first of them.
fn clock_victim<'a>(
    slots: &'a [AtomicPtr<Entry>],
    hand: &mut usize,
) -> Option<&'a AtomicPtr<Entry>> {
    let len = slots.len();
    let mut first = None;
    for _ in 0..(2 * len).min(CLOCK_SCAN_MAX) {
        let slot = slots.get(*hand % len)?;
        *hand = hand.wrapping_add(1);
        // SAFETY: Called under the writer lock, which is needed to free entries of the
        // published table.
        let Some(entry) = (unsafe { slot.load(Ordering::Relaxed).as_ref() }) else {
            continue;
        };
        if !entry.referenced.swap(false, Ordering::Relaxed) {
            return Some(slot);
        }
        first.get_or_insert(slot);
    }
    first
}

/// Whether `entry`, which the caller keeps alive, says "no build ID".
fn is_negative(entry: *mut Entry) -> bool {
    // SAFETY: The caller holds the writer lock or an RCU read lock, and `entry` was loaded
    // from a table, so it is valid.
    unsafe { entry.as_ref() }.is_some_and(|e| e.id.is_none())
}

/// Publishes `entry` for `inode`, replacing an older entry for it, or one chosen by CLOCK if
/// the bucket is full or the cache at its size limit, unless the cache was turned off since
/// `epoch` or the entry says "no build ID" and such entries have their share already. Returns
/// whether the entry was kept.
fn insert(inode: &Inode, entry: KBox<Entry>, grants: u32, epoch: usize) -> bool {
    let Some(lock) = writer() else {
        return false;
    };
    let key = inode.key();
    let negative = entry.id.is_none();
    let new = KBox::into_raw(entry);
    let mut retired = [ptr::null_mut(); 2];
    let published = {
        let mut w = Updating::lock(lock);
        // SAFETY: Tables are replaced and freed only under this lock.
        match unsafe { TABLE.load(Ordering::Relaxed).as_ref() } {
            _ if EPOCH.load(Ordering::Relaxed) != epoch => false,
            None => false,
            Some(table) => {
                let bucket = table.bucket(key);
                let mut slot = table.find(key).map(|(slot, _)| slot);
                let room = slot.is_some() || !negative || w.negatives < negative_cap(w.max_entries);
                if slot.is_none() && room {
                    slot = bucket.iter().find(|s| s.load(Ordering::Relaxed).is_null());
                    match slot {
                        None => {
                            let mut hand = w.hand;
                            slot = clock_victim(bucket, &mut hand);
                            w.hand = hand;
                            count(REPLACEMENT);
                        }
                        Some(_) if w.entries >= w.max_entries => {
                            let mut hand = w.hand;
                            if let Some(victim) = clock_victim(&table.slots, &mut hand) {
                                retired[1] = victim.swap(ptr::null_mut(), Ordering::Relaxed);
                                w.entries = w.entries.saturating_sub(1);
                                if is_negative(retired[1]) {
                                    w.negatives = w.negatives.saturating_sub(1);
                                }
                                count(REPLACEMENT);
                            }
                            w.hand = hand;
                        }
                        Some(_) => {}
                    }
                }
                match slot {
                    Some(slot) if room => {
                        // The entry is complete before any reader can load the pointer.
                        retired[0] = slot.swap(new, Ordering::Release);
                        if retired[0].is_null() {
                            w.entries = w.entries.saturating_add(1);
                        } else if is_negative(retired[0]) {
                            w.negatives = w.negatives.saturating_sub(1);
                        }
                        if negative {
                            w.negatives = w.negatives.saturating_add(1);
                        }
                        ENTRIES.store(w.entries, Ordering::Relaxed);
                        true
                    }
                    _ => false,
                }
            }
        }
    };
    for old in retired.into_iter().filter(|p| !p.is_null()) {
        // SAFETY: `old` was unpublished from the table under the writer lock above.
        unsafe { retire(old) };
    }
    if !published {
        // SAFETY: `new` came from `KBox::into_raw` above and was not published.
        drop(unsafe { KBox::from_raw(new) });
        return false;
    }
    // A writer that got write access since the parse began either is seen here, or its
    // `forget()`, which runs after the full barrier of `get_write_access()`, sees a fill in
    // progress, increments the grant counter and then sees the new entry and removes it.
    fence(Ordering::SeqCst);
    if !may_cache(inode) || write_grants(key).load(Ordering::Relaxed) != grants {
        forget(key, FILL_RACED);
        return false;
    }
    true
}

/// Drops the entry for the inode at `key`, if there is one, counting it as `why`.
///
/// Called when write access to the inode is granted and when the inode is freed; may run in
/// reclaim, so it neither allocates nor takes a lock held across an allocation.
pub(crate) fn forget(key: usize, why: Stat) {
    // A fill holds a reference on its inode, so no fill can be running for an inode that is
    // being freed: only write access needs to fail the fills that share its counter, and only
    // while there are fills. Either a fill that begins now sees the write access that the
    // caller's `get_write_access()` granted before this fence, or this sees the fill.
    if why != EVICTION {
        fence(Ordering::SeqCst);
        if FILLS.load(Ordering::Relaxed) != 0 {
            write_grants(key).fetch_add(1, Ordering::SeqCst);
        }
    }
    // An entry that this must drop is counted in `ENTRIES`, as it is in the table: the fill of
    // an inode being freed inserted it before the reference drop that frees the inode; a fill
    // of a file granted write access inserted it before its fence, and either that fence
    // precedes the one above, so this load sees its count or a later exact one, or it follows
    // it, and the fill sees the grant and drops the entry itself. So with no entry at all, as
    // while nothing asks for build IDs, this is one load.
    if ENTRIES.load(Ordering::Relaxed) == 0 {
        return;
    }
    // The common case, an inode without an entry, takes no lock.
    if !has_key(key) {
        return;
    }
    let Some(lock) = writer() else {
        return;
    };
    let removed = {
        let mut w = Updating::lock(lock);
        // SAFETY: Tables are replaced and freed only under this lock.
        let table = unsafe { TABLE.load(Ordering::Relaxed).as_ref() };
        match table.and_then(|table| table.find(key)) {
            Some((slot, _)) => {
                let old = slot.swap(ptr::null_mut(), Ordering::Relaxed);
                w.entries = w.entries.saturating_sub(1);
                if is_negative(old) {
                    w.negatives = w.negatives.saturating_sub(1);
                }
                ENTRIES.store(w.entries, Ordering::Relaxed);
                old
            }
            None => ptr::null_mut(),
        }
    };
    if !removed.is_null() {
        // SAFETY: `removed` was unpublished under the writer lock above.
        unsafe { retire(removed) };
        count(why);
    }
}

/// A fill between its first look at the inode and its insert: what the inode looked like
/// before the parse. Counted in [`FILLS`] while it lives.
struct Fill<'a> {
    file: &'a LocalFile,
    inode: &'a Inode,
    key: usize,
    grants: u32,
    epoch: usize,
    content: Content,
    internal: bool,
    _counted: FillCounted,
}

/// One fill counted in [`FILLS`] while it lives.
struct FillCounted;

impl FillCounted {
    fn new() -> Self {
        FILLS.fetch_add(1, Ordering::SeqCst);
        FillCounted
    }
}

impl Drop for FillCounted {
    fn drop(&mut self) {
        FILLS.fetch_sub(1, Ordering::Release);
    }
}

impl<'a> Fill<'a> {
    /// Begins a fill of `file`'s entry; `None` if what a parse finds now may not be cached, so
    /// that no parse is done for nothing.
    fn begin(file: &'a LocalFile) -> Option<Self> {
        if !is_on() || !hooks_on() {
            return None;
        }
        let inode = file.data_inode()?;
        if !fs_coherent(inode) {
            return None;
        }
        let key = inode.key();
        let counted = FillCounted::new();
        let epoch = EPOCH.load(Ordering::SeqCst);
        let grants = write_grants(key).load(Ordering::SeqCst);
        let internal = inode.on_internal_mount();
        let iversion_kept = inode.has_iversion();
        // Checked before the change attribute is marked queried: a refused fill must not make
        // every later write of the inode bump it.
        if !Stamp::read(inode).may_cache(internal, iversion_kept)
            || (internal && !sealed_against_writes(file))
        {
            return None;
        }
        // Marked queried before the recorded stamp is read, so that any change after that read
        // increments it.
        let iversion = iversion_kept.then(|| inode.query_iversion());
        let now = Stamp::read(inode);
        let fill = Fill {
            file,
            inode,
            key,
            grants,
            epoch,
            content: now.content(iversion),
            internal,
            _counted: counted,
        };
        run_fill_hook(
            file,
            bindings::buildid_cache_fill_stage_BUILDID_CACHE_STAGE_PARSE,
        );
        Some(fill)
    }

    /// Whether the inode is as it was when the fill began, and still holds the file's data.
    fn unchanged(&self) -> bool {
        fence(Ordering::SeqCst);
        let same_inode = self
            .file
            .data_inode()
            .is_some_and(|inode| inode.key() == self.key);
        let iversion_kept = self.inode.has_iversion();
        let now = Stamp::read(self.inode);
        same_inode
            && now.may_cache(self.internal, iversion_kept)
            && iversion_kept == self.content.iversion.is_some()
            && write_grants(self.key).load(Ordering::Relaxed) == self.grants
            && now.shows(&self.content)
    }

    /// Caches what the parse found, `result`, unless it says nothing lasting about the file
    /// (a read of the parse failed: `read_failed`) or the file changed meanwhile.
    fn finish(self, result: &Result<BuildId>, read_failed: bool, deferred: bool) {
        run_fill_hook(
            self.file,
            bindings::buildid_cache_fill_stage_BUILDID_CACHE_STAGE_INSERT,
        );
        let id = match result {
            Ok(id) => Some(*id),
            // C reports a failed read inside the note walk as "no build ID".
            Err(e) if *e == EINVAL && !read_failed => None,
            // I/O errors and signals say nothing lasting about the file.
            Err(_) => return,
        };
        if !self.unchanged() {
            count(FILL_RACED);
            return;
        }
        let entry = Entry {
            rcu: bindings::callback_head::default(),
            key: self.key,
            id,
            content: self.content,
            internal: self.internal,
            referenced: AtomicBool::new(false),
        };
        if let Ok(entry) = KBox::new(entry, GFP_KERNEL) {
            if insert(self.inode, entry, self.grants, self.epoch) {
                count(if deferred { DEFERRED_FILL } else { FILL });
            }
        }
    }
}

/// Lets the KUnit suite change the file at `stage` of a fill; nothing in other kernels.
#[inline]
fn run_fill_hook(file: &LocalFile, stage: bindings::buildid_cache_fill_stage) {
    #[cfg(CONFIG_BUILDID_CACHE_KUNIT_TEST)]
    {
        // SAFETY: `file` is valid for the call; the hook is the KUnit suite's and may sleep, as
        // fills may.
        unsafe { bindings::buildid_cache_run_fill_hook(file.as_ptr(), stage) };
    }
    #[cfg(not(CONFIG_BUILDID_CACHE_KUNIT_TEST))]
    let _ = (file, stage);
}

/// A reader that remembers whether one of its reads failed.
struct Recorder<R> {
    inner: R,
    failed: bool,
}

impl<R> Recorder<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            failed: false,
        }
    }

    fn note<T>(&mut self, result: Result<T>) -> Result<T> {
        self.failed |= result.is_err();
        result
    }
}

impl<R: ReadAt> ReadAt for Recorder<R> {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result {
        let result = self.inner.read_at(offset, buf);
        self.note(result)
    }

    fn fetch_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<Fetched> {
        let result = self.inner.fetch_at(offset, buf);
        self.note(result)
    }

    fn read_fetched(&self, at: usize, dst: &mut [u8]) {
        self.inner.read_fetched(at, dst);
    }
}

/// Parses `file` with the sleepable reader of `source` and remembers whether a read failed.
fn parse_recorded<C: PageCache>(source: &C) -> (Result<BuildId>, bool) {
    let mut reader = Recorder::new(SleepableReader::new(source));
    let result = elf::parse_elf(&mut reader);
    (result, reader.failed)
}

/// Parses `file` with the sleepable reader, as `__kernel_read()` reads it, and caches what the
/// parse found if it may. Returns what the parse found, as the uncached parse would.
///
/// Process context, may sleep; `file` is a regular file.
// Not inlined into `parse_file()`, which every export inlines: the exports keep only the hit path.
#[inline(never)]
pub(crate) fn parse_and_fill(file: &LocalFile, deferred: bool) -> Result<BuildId> {
    let Some(fill) = Fill::begin(file) else {
        return file::parse_file_uncached(file, Mode::Sleepable);
    };
    let (result, read_failed) = parse_recorded(file);
    fill.finish(&result, read_failed, deferred);
    result
}

/// Fills the cache with `file`'s build ID, read as a buffered read whatever the opener asked
/// for ([`FillSource`]); does not parse if the result could not be cached. For the deferred
/// fills, which have no caller to answer.
///
/// Process context, may sleep; `file` is a regular file.
pub(crate) fn fill(file: &LocalFile, deferred: bool) {
    if let Some(fill) = Fill::begin(file) {
        let (result, read_failed) = parse_recorded(&FillSource(file));
        fill.finish(&result, read_failed, deferred);
    }
}

/// A file as fills read it: its page cache, or buffered reads that ignore the opener's
/// `O_DIRECT` and `RWF_NOWAIT`-style flags (`buildid_cache_read()`), so that the entry says what
/// the file holds however the file that was mapped was opened. An `O_DIRECT` read of 64 unaligned
/// bytes fails on most block file systems, and that failure must not become "no build ID".
struct FillSource<'a>(&'a LocalFile);

impl PageCache for FillSource<'_> {
    type Folio = FolioView;

    const PAGE_SHIFT: u32 = <LocalFile as PageCache>::PAGE_SHIFT;

    const MAX_FILE_SIZE: i64 = <LocalFile as PageCache>::MAX_FILE_SIZE;

    fn uptodate_folio(&self, index: usize) -> Option<FolioView> {
        self.0.uptodate_folio(index)
    }

    fn size(&self) -> i64 {
        PageCache::size(self.0)
    }

    fn is_secretmem(&self) -> bool {
        PageCache::is_secretmem(self.0)
    }

    fn reads_through_page_cache(&self) -> bool {
        file::readable(self.0) && file::page_cache_holds_data(self.0)
    }

    fn read(&self, buf: &mut [u8], pos: i64) -> Result<usize> {
        // SAFETY: The file is valid for the call, and `buf` is valid for writing `buf.len()`
        // bytes.
        let ret = unsafe {
            bindings::buildid_cache_read(self.0.as_ptr(), buf.as_mut_ptr().cast(), buf.len(), pos)
        };
        match usize::try_from(ret) {
            Ok(n) => Ok(n),
            // A negative `ret` is an errno, which fits in `c_int`.
            Err(_) => Err(Error::from_errno(ret as kernel::ffi::c_int)),
        }
    }
}

/// What a lockless lookup saw of a VMA at one instant: every address in `start..end` mapped the
/// file whose build ID it found, `start` at file offset `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VmaRange {
    /// The first address of the VMA.
    pub(crate) start: usize,
    /// The address after its last.
    pub(crate) end: usize,
    /// The file offset that `start` mapped.
    pub(crate) offset: u64,
}

/// A VMA as `vma_snapshot_under_rcu()` read it, without any lock: its range, page offset, file
/// and the file's inode at one instant.
///
/// # Invariants
///
/// `raw` was filled by a successful `vma_snapshot_under_rcu()` under the RCU read lock that `'a`
/// borrows, of an address space that has a user for `'a`. So `raw.vma` stays valid for `'a` (VMAs
/// of an address space with a user are freed after a grace period), and so does `raw.inode`, when
/// not NULL: the VMA referenced a file with that inode during the read, and inodes are freed after
/// a grace period.
// Without per-VMA locks nothing makes one (`read()` always fails).
#[cfg_attr(not(CONFIG_PER_VMA_LOCK), allow(dead_code))]
struct VmaSnapshot<'a> {
    raw: bindings::vma_snapshot,
    _rcu: PhantomData<&'a rcu::Guard>,
}

impl<'a> VmaSnapshot<'a> {
    /// Reads the VMA that maps `addr` in `mm`; fails with [`ENOENT`] if none did at one instant
    /// of the call, and with [`EAGAIN`] if it could not be read without its lock.
    #[cfg(CONFIG_PER_VMA_LOCK)]
    #[inline]
    fn read(mm: &'a MmWithUser, addr: usize, _rcu: &'a rcu::Guard) -> Result<Self> {
        let mut raw = MaybeUninit::<bindings::vma_snapshot>::uninit();
        // SAFETY: `mm` has a user for the borrow, the RCU read lock is held, and `raw` is valid
        // for writing a `struct vma_snapshot`.
        let ret = unsafe { bindings::vma_snapshot_under_rcu(mm.as_raw(), addr, raw.as_mut_ptr()) };
        match ret {
            0 => Ok(Self {
                // SAFETY: A successful `vma_snapshot_under_rcu()` fills every field.
                raw: unsafe { raw.assume_init() },
                // INVARIANT: Filled by a successful read under the RCU read lock of `'a`, of `mm`,
                // which has a user for `'a`.
                _rcu: PhantomData,
            }),
            ret if ret == ENOENT.to_errno() => Err(ENOENT),
            _ => Err(EAGAIN),
        }
    }

    /// Without per-VMA locks, VMAs are not freed after a grace period: nothing can be read
    /// without `mmap_lock`.
    #[cfg(not(CONFIG_PER_VMA_LOCK))]
    #[inline]
    fn read(_mm: &'a MmWithUser, _addr: usize, _rcu: &'a rcu::Guard) -> Result<Self> {
        Err(EAGAIN)
    }

    /// The inode of the mapped file, `None` for an anonymous VMA.
    #[inline]
    fn inode(&self) -> Option<&'a Inode> {
        let inode = self.raw.inode;
        // SAFETY: By the type invariants, a non-NULL `inode` stays valid for `'a`.
        (!inode.is_null()).then(|| unsafe { Inode::from_raw(inode) })
    }

    #[inline]
    fn range(&self) -> VmaRange {
        VmaRange {
            start: self.raw.start,
            end: self.raw.end,
            offset: (self.raw.pgoff as u64) << bindings::PAGE_SHIFT,
        }
    }

    /// Queues a fill of the file the VMA mapped, which nothing pins; see
    /// `buildid_cache_defer_fill_unpinned()`.
    #[cold]
    fn defer_fill(&self) {
        // SAFETY: By the type invariants, `raw` is a successful snapshot, the RCU read lock under
        // which it was read is still held, and its address space still has a user.
        unsafe { bindings::buildid_cache_defer_fill_unpinned(&self.raw) };
    }
}

/// The cached build ID of the file mapped at `addr` in `mm`, and the range of the VMA that mapped
/// it, as the BPF stack helpers ask for a frame's: without `mmap_lock` or any other lock, reading
/// the VMA with `vma_snapshot_under_rcu()`. A miss queues a fill. Callers check
/// `buildid_cache_lockless_vma_enabled()` first, once for a batch of lookups.
///
/// Fails with [`ENOENT`] if no file is mapped at `addr`, [`EINVAL`] if the file is not a regular
/// file or is cached as having no build ID, and [`EAGAIN`] if the VMA could not be read without
/// its lock or the cache has no answer. Usable in any context, NMI included.
// Inline: its C ABI export (`buildid_rust.rs`) is the BPF stack helpers' call for each frame, and
// a call more costs a hit a noticeable share of its time.
#[inline]
pub(crate) fn vma_lookup(mm: &MmWithUser, addr: usize) -> Result<(BuildId, VmaRange)> {
    let guard = rcu::read_lock();
    let snap = VmaSnapshot::read(mm, addr, &guard)?;
    let inode = snap.inode().ok_or(ENOENT)?;
    if !inode.is_regular() {
        return Err(EINVAL);
    }
    match lookup_key_under(&guard, Some(inode)) {
        Some(found) => found.map(|id| (id, snap.range())),
        None => {
            snap.defer_fill();
            Err(EAGAIN)
        }
    }
}

/// Queues a fill of `file` for the worker; any context, NMI included.
// Not inlined, as `parse_and_fill()`.
#[inline(never)]
pub(crate) fn defer_fill(file: &LocalFile) {
    // Not for files that could not be cached anyway (a file opened on overlayfs has no data
    // inode here: the worker finds it).
    if file
        .data_inode_nofault()
        .is_some_and(|inode| !may_cache(inode))
    {
        return;
    }
    if is_on() && !file.is_secretmem() {
        // SAFETY: `file` is valid for the call; the callee takes its own reference.
        unsafe { bindings::buildid_cache_defer_fill(file.as_ptr()) };
    }
}

/// The cache's locks, made by the first change of the settings (the cache's initcall turns it
/// on) and never freed; a failed allocation leaves them for the next change to make.
fn locks_or_make() -> Result<&'static Locks> {
    if let Some(locks) = locks() {
        return Ok(locks);
    }
    let new = KBox::pin_init(
        pin_init!(Locks {
            settings <- new_mutex!(()),
            writer <- new_spinlock!(
                Writer {
                    entries: 0,
                    negatives: 0,
                    max_entries: DEFAULT_MAX_ENTRIES,
                    hand: 0,
                },
                "buildid_cache"
            ),
        }),
        GFP_KERNEL,
    )?;
    // SAFETY: The locks are never moved out of their allocation: it is published below and
    // never freed, or freed unpublished.
    let new = KBox::into_raw(unsafe { Pin::into_inner_unchecked(new) });
    match LOCKS.compare_exchange(ptr::null_mut(), new, Ordering::AcqRel, Ordering::Acquire) {
        // SAFETY: Published just now, never freed.
        Ok(_) => Ok(unsafe { &*new }),
        Err(published) => {
            // SAFETY: `new` came from `KBox::into_raw` above and was never published.
            drop(unsafe { KBox::from_raw(new) });
            // SAFETY: The exchange failed, so `published` is the non-null pointer to the locks
            // another task published, never freed.
            Ok(unsafe { &*published })
        }
    }
}

/// Turns the cache on or off. Either empties it: turning it off must, and on again starts
/// afresh.
///
/// Process context, may sleep. Fails with [`ENOMEM`] when there is no memory for the table;
/// the cache then stays as it was.
pub(crate) fn set_enabled(on: bool) -> Result {
    let locks = locks_or_make()?;
    let _settings = locks.settings.lock();
    let max_entries = locks.writer.lock().max_entries;
    switch(locks, on, max_entries, false)
}

/// Sets the size limit, [`MIN_ENTRIES`] to [`MAX_ENTRIES`]. A cache that is on keeps the
/// entries that fit, recently used ones first.
///
/// Process context, may sleep. Fails with [`EINVAL`] for a limit out of range, and as
/// [`set_enabled`] does; the cache then stays as it was.
pub(crate) fn set_max_entries(max_entries: usize) -> Result {
    if !(MIN_ENTRIES..=MAX_ENTRIES).contains(&max_entries) {
        return Err(EINVAL);
    }
    let locks = locks_or_make()?;
    let _settings = locks.settings.lock();
    switch(locks, is_on(), max_entries, true)
}

/// The size limit.
pub(crate) fn max_entries() -> usize {
    writer().map_or(DEFAULT_MAX_ENTRIES, |lock| lock.lock().max_entries)
}

/// Makes the table match `on` and `max_entries` (see [`configure`] for `keep`), then the hooks'
/// static key match the table: the hooks run whenever a table exists. Turning on makes
/// the table first, so no fill begins before the hooks that drop entries run; turning off
/// empties the table before the hooks stop, so no entry outlives an inode whose eviction they
/// no longer see. A failed change leaves both as they were.
///
/// Called with `locks.settings` held.
fn switch(locks: &Locks, on: bool, max_entries: usize, keep: bool) -> Result {
    configure(&locks.writer, on, max_entries, keep)?;
    // SAFETY: An FFI call that flips the hooks' static key; it may sleep, as the caller may.
    unsafe { bindings::buildid_cache_switch_hooks(on) };
    Ok(())
}

/// Turns the table on with room for `max_entries`, or off.
///
/// Turning it off empties it. Turning it on starts with an empty table, unless `keep` is set
/// and it is on already: then the entries move to the new table, as many as the new limit and
/// the new buckets hold.
///
/// Process context, may sleep; only [`switch`] calls it.
fn configure(lock: &SpinLock<Writer>, on: bool, max_entries: usize, keep: bool) -> Result {
    let new = if on {
        Some(Table::new(max_entries)?)
    } else {
        None
    };
    let (old, kept) = {
        let mut w = Updating::lock(lock);
        if !on {
            EPOCH.fetch_add(1, Ordering::SeqCst);
        }
        w.max_entries = max_entries;
        w.entries = 0;
        w.negatives = 0;
        // SAFETY: Tables are replaced and freed only under this lock.
        let old = unsafe { TABLE.load(Ordering::Relaxed).as_ref() };
        let kept = match (keep, old, new.as_deref()) {
            (true, Some(old), Some(new)) => {
                (w.entries, w.negatives) = copy_entries(old, new, max_entries);
                Some(old)
            }
            _ => None,
        };
        ENTRIES.store(w.entries, Ordering::Relaxed);
        // The copied entries are complete and were published by the old table already; the
        // release store orders the new table's slots before its pointer.
        let old_ptr = TABLE.swap(
            new.map_or(ptr::null_mut(), KBox::into_raw),
            Ordering::Release,
        );
        if let Some(old) = kept {
            // SAFETY: The new table was published above, under the writer lock.
            let new = unsafe { &*TABLE.load(Ordering::Relaxed) };
            retire_left_behind(old, new);
        }
        (old_ptr, kept.is_some())
    };
    if !old.is_null() {
        // Wait for the lookups that may still use the old table and its entries.
        rcu::synchronize_rcu();
        // SAFETY: `old` came from `KBox::into_raw`; it is unpublished, writers only use the
        // published table, and the grace period above ended every lookup of it.
        let old = unsafe { KBox::from_raw(old) };
        // With `kept`, each entry is in the new table or retired already.
        if !kept {
            for slot in old.slots.iter() {
                let entry = slot.load(Ordering::Relaxed);
                if !entry.is_null() {
                    // SAFETY: Entries come from `KBox::into_raw`; only this table held `entry`.
                    drop(unsafe { KBox::from_raw(entry) });
                }
            }
        }
    }
    Ok(())
}

/// Copies up to `max_entries` entries of `old`, the published table, into `new`, which is not
/// published yet, recently used ones first, and "no build ID" entries only up to their share.
/// Returns how many it copied, and how many of those say "no build ID".
///
/// `old` keeps its slots: until it is unpublished, [`forget`]'s lockless [`has_key`] must
/// find an entry in whichever table it reads. Called under the writer lock.
fn copy_entries(old: &Table, new: &Table, max_entries: usize) -> (usize, usize) {
    let (mut copied, mut negatives) = (0, 0);
    for referenced in [true, false] {
        for slot in old.slots.iter() {
            let entry = slot.load(Ordering::Relaxed);
            // SAFETY: Entries of the published table are freed only under the writer lock,
            // which the caller holds.
            let Some(e) = (unsafe { entry.as_ref() }) else {
                continue;
            };
            if copied >= max_entries {
                return (copied, negatives);
            }
            if e.referenced.load(Ordering::Relaxed) != referenced
                || (e.id.is_none() && negatives >= negative_cap(max_entries))
            {
                continue;
            }
            let free = new
                .bucket(e.key)
                .iter()
                .find(|s| s.load(Ordering::Relaxed).is_null());
            if let Some(free) = free {
                free.store(entry, Ordering::Relaxed);
                copied += 1;
                negatives += usize::from(e.id.is_none());
            }
        }
    }
    (copied, negatives)
}

/// Retires the entries of `old`, just unpublished, that [`copy_entries`] left out of `new`,
/// the published table. Called under the writer lock, before any other writer changes `new`.
fn retire_left_behind(old: &Table, new: &Table) {
    for slot in old.slots.iter() {
        let entry = slot.load(Ordering::Relaxed);
        // SAFETY: As in `copy_entries`; `old` is unpublished, so only lookups that started
        // before can still reach its entries.
        let Some(e) = (unsafe { entry.as_ref() }) else {
            continue;
        };
        let copied = new
            .find(e.key)
            .is_some_and(|(s, _)| s.load(Ordering::Relaxed) == entry);
        if !copied {
            // SAFETY: `entry` is reachable from no published table, and the grace period of
            // `call_rcu` covers the lookups that started before `old` was unpublished.
            unsafe { retire(entry) };
            count(REPLACEMENT);
        }
    }
}

/// Whether the table holds an entry for the inode at `key`, valid or not; any context.
pub(crate) fn has_key(key: usize) -> bool {
    with_entry(key, |_| ()).is_some()
}

/// The number of entries.
pub(crate) fn entries() -> usize {
    ENTRIES.load(Ordering::Relaxed)
}
