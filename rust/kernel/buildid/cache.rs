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
//! Only where sleeping is allowed ([`parse_and_fill`]): at `mmap()` of an executable file
//! mapping, by sleepable parses, and by the worker that nofault misses queue
//! (`lib/buildid_cache.c`). Writers serialize on one spinlock, which is never held across an
//! allocation, so inode eviction can take it from reclaim.
//!
//! # Validity
//!
//! Write access is the signal that content may change: it is needed for `write()`,
//! `truncate()` and writable shared mappings. An entry is filled only while nobody has write
//! access, and with no write access granted during the parse; it is dropped when write access
//! is granted ([`forget`] from `do_dentry_open()` and `vfs_truncate()`), and it is served only
//! while nobody has write access and the change attribute, size and change time still match
//! what was read before the parse. Entries are dropped when their inode is freed, so an inode
//! allocated at the same address never finds its predecessor's entry.

use super::{BuildId, Mode};
use crate::{
    alloc::{flags::GFP_KERNEL, KBox, KVVec},
    bindings,
    error::{code::*, Result},
    fs::{
        file::LocalFile,
        inode::{Inode, Timestamp},
    },
    init::InPlaceInit,
    new_spinlock,
    sync::{rcu, SpinLock},
};
use core::{
    pin::Pin,
    ptr::{self, addr_of_mut},
    sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering},
};

/// Slots per bucket: one cache line of pointers on 64-bit.
const WAYS: usize = 8;

/// `GOLDEN_RATIO_64` of `<linux/hash.h>`, for `hash_64()`.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// Counters of `lib/buildid_cache.c`.
pub type Stat = bindings::buildid_cache_stat;
pub use bindings::{
    buildid_cache_stat_BUILDID_CACHE_DEFERRED_FILL as DEFERRED_FILL,
    buildid_cache_stat_BUILDID_CACHE_EVICTION as EVICTION,
    buildid_cache_stat_BUILDID_CACHE_FILL as FILL,
    buildid_cache_stat_BUILDID_CACHE_FILL_RACED as FILL_RACED,
    buildid_cache_stat_BUILDID_CACHE_HIT as HIT, buildid_cache_stat_BUILDID_CACHE_MISS as MISS,
    buildid_cache_stat_BUILDID_CACHE_REPLACEMENT as REPLACEMENT,
};

fn count(stat: Stat) {
    // SAFETY: An FFI call that only increments a per-CPU counter; usable in any context.
    unsafe { bindings::buildid_cache_count(stat) };
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
    iversion: u64,
    size: i64,
    ctime: Timestamp,
    /// Set by hits, cleared by the CLOCK hand.
    referenced: AtomicBool,
}

impl Entry {
    /// Whether the entry still describes `inode`'s content. Usable in any context.
    fn describes(&self, inode: &Inode) -> bool {
        inode.write_count() <= 0
            && inode.peek_iversion() == self.iversion
            && inode.size() == self.size
            && inode.ctime() == self.ctime
    }

    /// Marks the entry recently used, without writing its cache line if it already is.
    fn touch(&self) {
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
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

/// The number of entries, for the counters file.
static ENTRIES: AtomicUsize = AtomicUsize::new(0);

/// Write-access grants by inode hash: a fill that saw one of these change during its parse
/// does not insert, whatever the file system's timestamps and change attribute say.
static WRITE_GRANTS: [AtomicU32; 64] = [const { AtomicU32::new(0) }; 64];

fn write_grants(key: usize) -> &'static AtomicU32 {
    let index = ((key as u64).wrapping_mul(GOLDEN_RATIO_64) >> 58) as usize;
    &WRITE_GRANTS[index % WRITE_GRANTS.len()]
}

/// State of the writers, who serialize on [`writer`]'s lock.
struct Writer {
    entries: usize,
    max_entries: usize,
    /// The CLOCK hand: the next slot the replacement sweep looks at.
    hand: usize,
}

/// The writers' lock, allocated by the first [`configure`] and never freed.
static WRITER: AtomicPtr<SpinLock<Writer>> = AtomicPtr::new(ptr::null_mut());

fn writer() -> Option<&'static SpinLock<Writer>> {
    // SAFETY: `WRITER` is null or points to a lock leaked by `configure`, never freed.
    unsafe { WRITER.load(Ordering::Acquire).as_ref() }
}

/// Whether the cache is on.
pub fn is_on() -> bool {
    !TABLE.load(Ordering::Relaxed).is_null()
}

/// Runs `f` on the entry for `key` of the published table, under the RCU read lock.
#[inline]
fn with_entry<R>(key: usize, f: impl FnOnce(&Entry) -> R) -> Option<R> {
    let _guard = rcu::read_lock();
    // SAFETY: A published table is freed only after a grace period following its replacement,
    // and the RCU read lock is held.
    let table = unsafe { TABLE.load(Ordering::Acquire).as_ref() }?;
    table.find(key).map(|(_, entry)| f(entry))
}

/// Looks `file`'s build ID up: `None` on a miss, else what a parse found (a build ID, or
/// [`EINVAL`] for a file without one).
///
/// Takes no lock, never sleeps, never waits for a writer: usable in any context, NMI included.
#[inline]
pub fn lookup(file: &LocalFile, mode: Mode) -> Option<Result<BuildId>> {
    if !is_on() {
        return None;
    }
    let hit = file.data_inode(mode == Mode::Sleepable).and_then(|inode| {
        with_entry(inode.key(), |entry| {
            entry.describes(inode).then(|| {
                entry.touch();
                entry.id
            })
        })
        .flatten()
    });
    count(if hit.is_some() { HIT } else { MISS });
    hit.map(|id| id.ok_or(EINVAL))
}

/// Whether the cache holds an entry for `file` that describes its content; counts nothing.
pub fn contains(file: &LocalFile) -> bool {
    file.data_inode(true).is_some_and(|inode| {
        with_entry(inode.key(), |entry| entry.describes(inode)).unwrap_or(false)
    })
}

/// Picks the entry to replace among `slots`, CLOCK style, starting at `hand`: the first one
/// not referenced since the hand last passed, clearing the flags it passes.
fn clock_victim<'a>(
    slots: &'a [AtomicPtr<Entry>],
    hand: &mut usize,
) -> Option<&'a AtomicPtr<Entry>> {
    let len = slots.len();
    for _ in 0..2 * len {
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
    }
    None
}

/// Publishes `entry` for `inode`, replacing an older entry for it, or one chosen by CLOCK if
/// the bucket is full or the cache at its size limit. Returns whether the entry was kept.
fn insert(inode: &Inode, entry: KBox<Entry>, grants: u32) -> bool {
    let Some(lock) = writer() else {
        return false;
    };
    let key = inode.key();
    let new = KBox::into_raw(entry);
    let mut retired = [ptr::null_mut(); 2];
    let published = {
        let mut w = lock.lock();
        // SAFETY: Tables are replaced and freed only under this lock.
        match unsafe { TABLE.load(Ordering::Relaxed).as_ref() } {
            None => false,
            Some(table) => {
                let bucket = table.bucket(key);
                let mut slot = table.find(key).map(|(slot, _)| slot);
                if slot.is_none() {
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
                                count(REPLACEMENT);
                            }
                            w.hand = hand;
                        }
                        Some(_) => {}
                    }
                }
                match slot {
                    Some(slot) => {
                        // The entry is complete before any reader can load the pointer.
                        retired[0] = slot.swap(new, Ordering::Release);
                        if retired[0].is_null() {
                            w.entries = w.entries.saturating_add(1);
                        }
                        ENTRIES.store(w.entries, Ordering::Relaxed);
                        true
                    }
                    None => false,
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
    // `forget()`, which runs after the full barrier of `get_write_access()` and its own
    // increment of the grant counter, sees the new entry and removes it.
    fence(Ordering::SeqCst);
    if inode.write_count() > 0 || write_grants(key).load(Ordering::Relaxed) != grants {
        forget(key, FILL_RACED);
        return false;
    }
    true
}

/// Drops the entry for the inode at `key`, if there is one, counting it as `why`.
///
/// Called when write access to the inode is granted and when the inode is freed; may run in
/// reclaim, so it neither allocates nor takes a lock held across an allocation.
pub fn forget(key: usize, why: Stat) {
    // A fill holds a reference on its inode, so no fill can be running for an inode that is
    // being freed: only write access needs to fail the fills that share its counter.
    if why != EVICTION {
        write_grants(key).fetch_add(1, Ordering::SeqCst);
    }
    // The common case, an inode without an entry, takes no lock.
    if !has_key(key) {
        return;
    }
    let Some(lock) = writer() else {
        return;
    };
    let removed = {
        let mut w = lock.lock();
        // SAFETY: Tables are replaced and freed only under this lock.
        let table = unsafe { TABLE.load(Ordering::Relaxed).as_ref() };
        match table.and_then(|table| table.find(key)) {
            Some((slot, _)) => {
                let old = slot.swap(ptr::null_mut(), Ordering::Relaxed);
                w.entries = w.entries.saturating_sub(1);
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

/// Parses `file` with the sleepable reader and, unless the file changed or was open for write
/// meanwhile, caches what the parse found. `deferred` says who asked, for the counters.
///
/// Process context, may sleep.
pub fn parse_and_fill(file: &LocalFile, deferred: bool) -> Result<BuildId> {
    let parse = || super::parse_file_uncached(file, Mode::Sleepable);
    if !is_on() {
        return parse();
    }
    let Some(inode) = file.data_inode(true) else {
        return parse();
    };
    let key = inode.key();
    let grants = write_grants(key).load(Ordering::SeqCst);
    if inode.write_count() > 0 {
        return parse();
    }
    let iversion = inode.query_iversion();
    let ctime = inode.ctime();
    let size = inode.size();

    let result = parse();
    let id = match result {
        Ok(id) => Some(id),
        Err(e) if e == EINVAL => None,
        // I/O errors and signals say nothing lasting about the file.
        Err(_) => return result,
    };
    fence(Ordering::SeqCst);
    let unchanged = inode.write_count() <= 0
        && write_grants(key).load(Ordering::Relaxed) == grants
        && inode.peek_iversion() == iversion
        && inode.size() == size
        && inode.ctime() == ctime;
    if !unchanged {
        count(FILL_RACED);
        return result;
    }
    let entry = Entry {
        rcu: bindings::callback_head::default(),
        key,
        id,
        iversion,
        size,
        ctime,
        referenced: AtomicBool::new(false),
    };
    if let Ok(entry) = KBox::new(entry, GFP_KERNEL) {
        if insert(inode, entry, grants) {
            count(if deferred { DEFERRED_FILL } else { FILL });
        }
    }
    result
}

/// Queues a fill of `file` for the worker; any context, NMI included.
pub fn defer_fill(file: &LocalFile) {
    if is_on() && !file.is_secretmem() {
        // SAFETY: `file` is valid for the call; the callee takes its own reference.
        unsafe { bindings::buildid_cache_defer_fill(file.as_ptr()) };
    }
}

/// Turns the cache on with room for `max_entries`, or off.
///
/// Turning it off empties it. Turning it on starts with an empty table, unless `keep` is set
/// and it is on already: then the entries move to the new table, as many as the new limit and
/// the new buckets hold.
///
/// Process context, may sleep; callers serialize (`lib/buildid_cache.c` holds a mutex).
pub fn configure(on: bool, max_entries: usize, keep: bool) -> Result {
    let lock = match writer() {
        Some(lock) => lock,
        None => {
            let writer = Writer {
                entries: 0,
                max_entries,
                hand: 0,
            };
            let lock = KBox::pin_init(new_spinlock!(writer, "buildid_cache"), GFP_KERNEL)?;
            // SAFETY: The lock is never moved out of its allocation, which is never freed.
            let lock = KBox::into_raw(unsafe { Pin::into_inner_unchecked(lock) });
            WRITER.store(lock, Ordering::Release);
            // SAFETY: Just leaked above, never freed.
            unsafe { &*lock }
        }
    };
    let new = if on {
        Some(Table::new(max_entries)?)
    } else {
        None
    };
    let (old, kept) = {
        let mut w = lock.lock();
        w.max_entries = max_entries;
        w.entries = 0;
        // SAFETY: Tables are replaced and freed only under this lock.
        let old = unsafe { TABLE.load(Ordering::Relaxed).as_ref() };
        let kept = match (keep, old, new.as_deref()) {
            (true, Some(old), Some(new)) => {
                w.entries = copy_entries(old, new, max_entries);
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
/// published yet, recently used ones first, and returns how many it copied.
///
/// `old` keeps its slots: until it is unpublished, [`forget`]'s lockless [`has_key`] must
/// find an entry in whichever table it reads. Called under the writer lock.
fn copy_entries(old: &Table, new: &Table, max_entries: usize) -> usize {
    let mut copied = 0;
    for referenced in [true, false] {
        for slot in old.slots.iter() {
            let entry = slot.load(Ordering::Relaxed);
            // SAFETY: Entries of the published table are freed only under the writer lock,
            // which the caller holds.
            let Some(e) = (unsafe { entry.as_ref() }) else {
                continue;
            };
            if copied >= max_entries {
                return copied;
            }
            if e.referenced.load(Ordering::Relaxed) != referenced {
                continue;
            }
            let free = new
                .bucket(e.key)
                .iter()
                .find(|s| s.load(Ordering::Relaxed).is_null());
            if let Some(free) = free {
                free.store(entry, Ordering::Relaxed);
                copied += 1;
            }
        }
    }
    copied
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
pub fn has_key(key: usize) -> bool {
    with_entry(key, |_| ()).is_some()
}

/// The number of entries.
pub fn entries() -> usize {
    ENTRIES.load(Ordering::Relaxed)
}
