// SPDX-License-Identifier: GPL-2.0

//! Unit tests of the public API of `elf.rs`, and of the kernel's readers
//! (`freader.rs`) on the page cache model.

use buildid_elf::corpus::{build_id_note, id};
use buildid_elf::elf::{self, BuildId, Fetched, MemReader, ReadAt, BUILD_ID_SIZE_MAX};
use buildid_elf::freader::{NofaultReader, SleepableReader};
use buildid_elf::model::{FileModel, Folio, OpenFile};
use kernel::error::{code::*, Error, Result};

#[test]
fn build_id_accessors() {
    let b = BuildId::new(&[1, 2, 3]).unwrap();
    assert_eq!(b.size(), 3);
    assert_eq!(b.as_bytes(), &[1, 2, 3]);
    let mut padded = [0u8; BUILD_ID_SIZE_MAX];
    padded[..3].copy_from_slice(&[1, 2, 3]);
    assert_eq!(b.padded(), &padded);
    assert!(BuildId::new(&[]).is_none());
    assert!(BuildId::new(&[0; 21]).is_none());
    assert_eq!(BuildId::new(&[9; 20]).unwrap().as_bytes(), &[9; 20]);
}

#[test]
fn parse_buf_returns_size() {
    let i = id(7, 3);
    let b = elf::parse_buf(&build_id_note(&i)).unwrap();
    assert_eq!(b.as_bytes(), &i[..]);
    assert_eq!(b.size(), 7);
}

/// A reader that must never be called.
struct Unreachable;
impl ReadAt for Unreachable {
    fn read_at(&mut self, offset: i64, buf: &mut [u8]) -> Result<()> {
        panic!("reader called at {offset} for {}", buf.len());
    }
}

#[test]
fn fetch_overflow_check_is_unsigned_64_bit() {
    let mut buf = [0u8; 16];
    // (u64)-16 + 16 wraps: -EOVERFLOW without calling the reader.
    assert_eq!(elf::fetch(&mut Unreachable, -16, &mut buf), Err(EOVERFLOW));
    assert_eq!(elf::fetch(&mut Unreachable, -1, &mut buf), Err(EOVERFLOW));
    // -17 + 16 = 2^64 - 1: no wrap, handed to the reader.
    let mut mem = MemReader::new(&[0; 64]);
    assert_eq!(elf::fetch(&mut mem, -17, &mut buf), Err(ERANGE));
    assert_eq!(elf::fetch(&mut mem, i64::MIN, &mut buf), Err(ERANGE));
    assert_eq!(elf::fetch(&mut mem, 48, &mut buf), Ok(()));
    assert_eq!(elf::fetch(&mut mem, 49, &mut buf), Err(ERANGE));
    // An empty read at the very end is fine, at i64::MAX too (no wrap).
    assert_eq!(elf::fetch(&mut mem, 64, &mut []), Ok(()));
    assert_eq!(elf::fetch(&mut mem, i64::MAX, &mut []), Err(ERANGE));
}

#[test]
fn mem_reader_used_directly_with_wrapping_request_does_not_panic() {
    let data = [1u8; 32];
    let mut r = MemReader::new(&data);
    let mut buf = [0u8; 16];
    // C would index out of bounds here; the port reports -ERANGE.
    assert_eq!(r.read_at(-1, &mut buf), Err(ERANGE));
    assert_eq!(r.read_at(16, &mut buf), Ok(()));
    assert_eq!(buf, [1; 16]);
}

#[test]
fn parse_notes_rejects_end_beyond_u32_without_reading() {
    assert_eq!(elf::parse_notes(&mut Unreachable, 1 << 32, 0), Err(EINVAL));
    assert_eq!(elf::parse_notes(&mut Unreachable, -1, 0), Err(EINVAL));
    assert_eq!(
        elf::parse_notes(&mut Unreachable, i64::MAX, u32::MAX),
        Err(EINVAL)
    );
    assert_eq!(elf::parse_notes(&mut Unreachable, 0, 16), Err(EINVAL));
}

#[test]
fn errno_round_trip() {
    // The host stand-in for `kernel::error` converts as the kernel's does.
    assert_eq!(EINVAL.to_errno(), -22);
    assert_eq!(Error::from_errno(-22), EINVAL);
    assert_eq!(Error::from_errno(-4095).to_errno(), -4095);
    for not_an_error in [0, 1, -4096, i32::MIN, i32::MAX] {
        assert_eq!(Error::from_errno(not_an_error), EINVAL);
    }
}

#[test]
fn sleepable_reader() {
    let f = FileModel::new((0..100).collect());
    let open = OpenFile::new(&f);
    let cache = &open;
    let mut r = SleepableReader::new(&cache);
    let mut buf = [0u8; 8];
    // Served from the page cache.
    assert_eq!(r.read_at(92, &mut buf), Ok(()));
    assert_eq!(buf[0], 92);
    assert_eq!(open.reads(), 0);
    // Past end of file it reads, and a short read is -EIO.
    assert_eq!(r.read_at(93, &mut buf), Err(EIO));
    assert_eq!(r.read_at(1000, &mut buf), Err(EIO));
    // No rw_verify_area() in __kernel_read(): tmpfs reads nothing near LLONG_MAX.
    assert_eq!(r.read_at(i64::MAX - 4, &mut buf), Err(EIO));
    assert_eq!(open.reads(), 3);
    // At a negative position a block file system's read never returns: no read at all, and
    // the short read tmpfs would give.
    assert_eq!(r.read_at(-1, &mut buf), Err(EIO));
    assert_eq!(r.read_at(i64::MIN, &mut buf), Err(EIO));
    assert_eq!(open.reads(), 3);
    assert_eq!(open.negative_reads(), 0);
    drop(r);
    assert_eq!(open.references(), 0);
}

#[test]
fn sleepable_reader_reads_what_is_not_cached() {
    let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 251) as u8).collect();
    let f = FileModel::new(data.clone()).with_cache(vec![Folio::Uptodate, Folio::Absent]);
    let open = OpenFile::new(&f);
    let cache = &open;
    let mut r = SleepableReader::new(&cache);
    let mut buf = [0u8; 16];
    // Crosses into the absent folio: one read, same bytes.
    assert_eq!(r.read_at(4090, &mut buf), Ok(()));
    assert_eq!(&buf, &data[4090..4106]);
    assert_eq!(open.reads(), 1);
    // Kept in place in the cached folio.
    assert_eq!(r.fetch_at(16, &mut buf), Ok(Fetched::InReader));
    let mut field = [0u8; 4];
    r.read_fetched(4, &mut field);
    assert_eq!(&field, &data[20..24]);
    // A file __kernel_read() cannot read is never served from the cache.
    drop(r);
    let mut unreadable = OpenFile::new(&f);
    unreadable.can_read = false;
    let cache = &unreadable;
    let mut r = SleepableReader::new(&cache);
    assert_eq!(r.read_at(0, &mut buf), Ok(()));
    assert_eq!(unreadable.reads(), 1);
}

#[test]
fn nofault_reader() {
    let data: Vec<u8> = (0..3 * 4096 + 10).map(|i| (i % 251) as u8 + 1).collect();
    let f = FileModel::new(data.clone()).with_cache(vec![
        Folio::Uptodate,
        Folio::Absent,
        Folio::Uptodate,
        Folio::Uptodate,
    ]);
    let open = OpenFile::new(&f);
    let cache = &open;
    let mut r = NofaultReader::new(&cache);
    let mut buf = [0u8; 16];
    assert_eq!(r.read_at(0, &mut buf), Ok(()));
    assert_eq!(r.read_at(4090, &mut buf), Err(EFAULT)); // crosses into absent page 1
    assert_eq!(r.read_at(4096, &mut buf), Err(EFAULT));
    assert_eq!(r.read_at(2 * 4096 + 4090, &mut buf), Ok(())); // pages 2 and 3
    assert_eq!(&buf, &data[2 * 4096 + 4090..2 * 4096 + 4106]);
    // Past EOF inside the last page: zeroes.
    assert_eq!(r.read_at(3 * 4096 + 8, &mut buf), Ok(()));
    assert_eq!(&buf[..2], &data[3 * 4096 + 8..]);
    assert_eq!(&buf[2..], &[0; 14]);
    // The next page does not exist.
    assert_eq!(r.read_at(4 * 4096, &mut buf), Err(EFAULT));
    assert_eq!(r.read_at(-1, &mut buf), Err(EFAULT));
    drop(r);
    assert_eq!(open.references(), 0);
    let g = f.clone().with_cache(vec![Folio::NotUptodate]);
    let open = OpenFile::new(&g);
    let cache = &open;
    assert_eq!(NofaultReader::new(&cache).read_at(0, &mut buf), Err(EFAULT));
    let mut s = f.clone();
    s.secretmem = true;
    let open = OpenFile::new(&s);
    let cache = &open;
    assert_eq!(NofaultReader::new(&cache).read_at(0, &mut buf), Err(EFAULT));
    assert_eq!(
        SleepableReader::new(&cache).read_at(0, &mut buf),
        Err(EFAULT)
    );
    assert_eq!(open.lookups() + open.reads(), 0);
}

#[test]
fn empty_nofault_reads_fail_where_longer_ones_do() {
    // C's freader_fetch() looks the folio up for an empty fetch too.
    let data: Vec<u8> = (0..2 * 4096).map(|i| (i % 251) as u8).collect();
    let f = FileModel::new(data).with_cache(vec![Folio::Uptodate, Folio::Absent]);
    let open = OpenFile::new(&f);
    let cache = &open;
    let mut r = NofaultReader::new(&cache);
    assert_eq!(r.read_at(0, &mut [0u8; 0]), Ok(()));
    assert_eq!(r.read_at(4096, &mut [0u8; 0]), Err(EFAULT));
    assert_eq!(r.read_at(-1, &mut [0u8; 0]), Err(EFAULT));
    drop(r);
    assert_eq!(open.references(), 0);
    let mut s = f.clone();
    s.secretmem = true;
    let open = OpenFile::new(&s);
    let cache = &open;
    assert_eq!(
        NofaultReader::new(&cache).read_at(0, &mut [0u8; 0]),
        Err(EFAULT)
    );
    assert_eq!(
        NofaultReader::new(&cache).fetch_at(0, &mut [0u8; 0]),
        Err(EFAULT)
    );
    assert_eq!(open.lookups(), 0);
}

#[test]
fn nofault_reader_follows_the_eviction_schedule() {
    let data: Vec<u8> = (0..2 * 4096).map(|i| (i % 251) as u8).collect();
    let mut f = FileModel::new(data);
    // The second lookup finds nothing.
    f.evict_mask = 0b10;
    let open = OpenFile::new(&f);
    let cache = &open;
    let mut r = NofaultReader::new(&cache);
    let mut buf = [0u8; 16];
    assert_eq!(r.read_at(0, &mut buf), Ok(()));
    // Same folio: no lookup.
    assert_eq!(r.read_at(100, &mut buf), Ok(()));
    assert_eq!(r.read_at(4096, &mut buf), Err(EFAULT));
    assert_eq!(r.read_at(4096, &mut buf), Ok(()));
    assert_eq!(open.lookups(), 3);
}
