// SPDX-License-Identifier: GPL-2.0

//! `buildid record-exits`: the executable file mappings of every process that
//! exits or execs, with their build IDs, recorded by a BPF program while the
//! mappings still exist, so that stacks taken from those processes can be
//! symbolized after they are gone.

use std::collections::HashMap;
use std::io::Write;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::RingBufferBuilder;
use regex::Regex;

use serde::Serialize;

use crate::hex;

mod skel {
    include!(concat!(env!("OUT_DIR"), "/record_exits.skel.rs"));
}
use skel::RecordExitsSkelBuilder;

/// The layout of `struct mapping_record` in `bpf/record_exits.h`.
const PATH_MAX: usize = 512;
const COMM_LEN: usize = 16;
const ID_MAX: usize = 20;
const KIND_MAPPING: u32 = 1;
const KIND_END: u32 = 2;
const EVENT_EXIT: u32 = 1;
const EVENT_EXEC: u32 = 2;

/// `buildid help record-exits`.
pub const LONG_ABOUT: &str =
    "Until SIGINT or SIGTERM, prints the executable file mappings of every \
process that exits (or execs: its old image goes away) with their build IDs, one line per \
mapping: event, pid, comm, range, file offset, device, inode, path and build ID (or why there is \
none).  Needs root and a kernel with BTF and the bpf_vma_build_id() kfunc.";

/// The ring buffer's size by default: a burst of about 5000 exits of
/// processes with a few libraries each, at about 900 bytes per mapping.
const DEFAULT_BUFFER_MB: u32 = 32;

/// What the command line asks for.
#[derive(Debug, PartialEq, clap::Args)]
pub struct Options {
    /// One JSON object per line, with the time of the event
    #[arg(long)]
    pub json: bool,
    /// Keep the processes whose command name matches REGEX
    #[arg(long, value_name = "REGEX")]
    pub comm: Option<String>,
    /// Write the lines to FILE instead of standard output
    #[arg(short = 'o', value_name = "FILE")]
    pub output: Option<String>,
    /// The ring buffer that the BPF programs fill, in MiB (a power of two): what is lost when
    /// this program cannot keep up is counted and reported at the end
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUFFER_MB, value_parser = parse_buffer_mb)]
    pub buffer_mb: u32,
}

fn parse_buffer_mb(s: &str) -> Result<u32, String> {
    s.parse()
        .ok()
        .filter(|n: &u32| n.is_power_of_two() && *n <= 1024)
        .ok_or_else(|| "a power of two from 1 to 1024 expected".to_string())
}

/// One record of the ring buffer.
#[derive(Debug, Clone, PartialEq)]
struct Record {
    kind: u32,
    event: u32,
    start: u64,
    end: u64,
    offset: u64,
    ino: u64,
    time_ns: u64,
    dev: u32,
    pid: u32,
    build_id_ret: i32,
    dropped: u32,
    path: String,
    path_cut: bool,
    comm: String,
    build_id: Vec<u8>,
}

/// Reads fixed-size fields off the front of a record, in the machine's byte order.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_ne_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_ne_bytes(self.take(8)?.try_into().ok()?))
    }
}

/// "libc.so.6/lib/usr/" (the BPF program's order) as "/usr/lib/libc.so.6".
fn path_from_leaf_up(bytes: &[u8]) -> String {
    let names: Vec<_> = bytes
        .split(|&b| b == b'/')
        .filter(|n| !n.is_empty())
        .collect();
    let mut path = String::new();
    for name in names.iter().rev() {
        path.push('/');
        path.push_str(&String::from_utf8_lossy(name));
    }
    if path.is_empty() {
        path.push('/');
    }
    path
}

fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

impl Record {
    fn parse(data: &[u8]) -> Option<Record> {
        let mut f = Fields(data);
        let kind = f.u32()?;
        let event = f.u32()?;
        let (start, end, offset, ino) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?);
        let time_ns = f.u64()?;
        let (dev, pid) = (f.u32()?, f.u32()?);
        let build_id_ret = f.u32()? as i32;
        let path_cut = f.u32()? != 0;
        let (dropped, path_len) = (f.u32()?, f.u32()?);
        let _scratch = (f.u64()?, f.u64()?);
        let comm = c_string(f.take(COMM_LEN)?);
        let id = f.take(ID_MAX)?;
        let path = f.take(PATH_MAX)?;
        let path_len = usize::try_from(path_len).ok()?;
        let build_id = match usize::try_from(build_id_ret) {
            Ok(n) if n <= ID_MAX => id[..n].to_vec(),
            _ => Vec::new(),
        };
        Some(Record {
            kind,
            event,
            start,
            end,
            offset,
            ino,
            time_ns,
            dev,
            pid,
            build_id_ret,
            dropped,
            path: path_from_leaf_up(&path[..path_len.min(PATH_MAX)]),
            path_cut,
            comm,
            build_id,
        })
    }
}

/// Why a mapping has no build ID, from bpf_vma_build_id()'s error.
fn why_no_id(ret: i32) -> String {
    match -ret {
        libc::ENOENT => "no file".into(),
        libc::EAGAIN => "not in the page cache yet".into(),
        libc::EINVAL => "no build ID note".into(),
        libc::ERANGE => "build ID too long".into(),
        e => format!("error {e}"),
    }
}

fn event_name(event: u32) -> &'static str {
    match event {
        EVENT_EXIT => "exit",
        EVENT_EXEC => "exec",
        _ => "?",
    }
}

/// One mapping as `--json` prints it.
#[derive(Serialize)]
struct MappingLine<'a> {
    event: &'static str,
    time_ns: u64,
    pid: u32,
    comm: &'a str,
    start: String,
    end: String,
    offset: String,
    dev: String,
    inode: u64,
    path: &'a str,
    build_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

/// One output line for mapping `r`.
fn format_mapping(r: &Record, json: bool) -> String {
    let (major, minor) = (r.dev >> 20, r.dev & 0xfffff);
    // A cut path lacks the names nearest the root.
    let path = if r.path_cut {
        format!("/...{}", r.path)
    } else {
        r.path.clone()
    };
    if json {
        let line = MappingLine {
            event: event_name(r.event),
            time_ns: r.time_ns,
            pid: r.pid,
            comm: &r.comm,
            start: format!("{:#x}", r.start),
            end: format!("{:#x}", r.end),
            offset: format!("{:#x}", r.offset),
            dev: format!("{major:02x}:{minor:02x}"),
            inode: r.ino,
            path: &path,
            build_id: (!r.build_id.is_empty()).then(|| hex(&r.build_id)),
            error: r.build_id.is_empty().then(|| why_no_id(r.build_id_ret)),
        };
        serde_json::to_string(&line).unwrap_or_default()
    } else {
        let id = if r.build_id.is_empty() {
            format!("- ({})", why_no_id(r.build_id_ret))
        } else {
            hex(&r.build_id)
        };
        format!(
            "{} {} {} {:x}-{:x} {:08x} {:02x}:{:02x} {} {} {}",
            event_name(r.event),
            r.pid,
            r.comm,
            r.start,
            r.end,
            r.offset,
            major,
            minor,
            r.ino,
            path,
            id
        )
    }
}

/// The records of processes whose end has not come yet, and what was printed.
#[derive(Default)]
struct Collector {
    pending: HashMap<(u32, u32), Vec<Record>>,
    processes: u64,
    mappings: u64,
    incomplete: u64,
}

impl Collector {
    /// Takes one record; returns the lines of a process whose list is complete.
    fn add(&mut self, r: Record, keep: &dyn Fn(&str) -> bool, json: bool) -> Vec<String> {
        let key = (r.pid, r.event);
        if r.kind == KIND_MAPPING {
            self.pending.entry(key).or_default().push(r);
            return Vec::new();
        }
        if r.kind != KIND_END {
            return Vec::new();
        }
        let mut maps = self.pending.remove(&key).unwrap_or_default();
        maps.sort_by_key(|m| m.start);
        if r.dropped != 0 {
            self.incomplete += 1;
        }
        if !keep(&r.comm) {
            return Vec::new();
        }
        self.processes += 1;
        self.mappings += maps.len() as u64;
        maps.iter().map(|m| format_mapping(m, json)).collect()
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn catch_stop_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: `on_signal` only stores to an atomic, which is async-signal-safe; the
        // handler is installed once, before any other thread exists.
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }
}

/// Whether the running kernel's BTF names `func` (a kfunc, say).
fn kernel_has(func: &str) -> std::io::Result<bool> {
    let btf = std::fs::read("/sys/kernel/btf/vmlinux")?;
    let needle = [func.as_bytes(), b"\0"].concat();
    Ok(btf.windows(needle.len()).any(|w| w == needle.as_slice()))
}

/// What the kernel counted for one of the programs.
#[derive(Default)]
struct ProgStats {
    runs: u64,
    /// Nanoseconds spent in it; 0 unless `kernel.bpf_stats_enabled` is 1.
    run_time_ns: u64,
    /// Calls it did not run for: the program was already running on that
    /// CPU, in a task that had been preempted.
    recursion_misses: u64,
}

fn prog_stats(prog: &impl AsFd) -> Result<ProgStats, String> {
    let mut info = libbpf_rs::libbpf_sys::bpf_prog_info::default();
    let mut len = u32::try_from(std::mem::size_of_val(&info)).map_err(|e| e.to_string())?;
    // SAFETY: `info` is a `bpf_prog_info` of `len` bytes, which the kernel fills up to
    // `len`; the descriptor is a BPF program's, open for the whole call.
    let ret = unsafe {
        libbpf_rs::libbpf_sys::bpf_prog_get_info_by_fd(
            prog.as_fd().as_raw_fd(),
            &mut info,
            &mut len,
        )
    };
    if ret != 0 {
        return Err(format!(
            "the programs' counters: {}",
            std::io::Error::from_raw_os_error(-ret)
        ));
    }
    Ok(ProgStats {
        runs: info.run_cnt,
        run_time_ns: info.run_time_ns,
        recursion_misses: info.recursion_misses,
    })
}

pub fn run(opts: &Options) -> Result<(), String> {
    let keep = match &opts.comm {
        Some(re) => {
            let re = Regex::new(re).map_err(|e| format!("--comm: {e}"))?;
            Box::new(move |c: &str| re.is_match(c)) as Box<dyn Fn(&str) -> bool>
        }
        None => Box::new(|_: &str| true),
    };
    let mut out: Box<dyn Write> = match &opts.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?,
        )),
        None => Box::new(std::io::stdout()),
    };
    // SAFETY: geteuid() has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("record-exits needs root: it loads and attaches BPF programs".into());
    }
    match kernel_has("bpf_vma_build_id") {
        Err(e) => {
            return Err(format!(
                "/sys/kernel/btf/vmlinux: {e}: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF), \
                 which the BPF program needs"
            ))
        }
        Ok(false) => {
            return Err(
                "the kernel has no bpf_vma_build_id() kfunc: it needs the build ID \
                        patches of this project"
                    .into(),
            )
        }
        Ok(true) => {}
    }
    catch_stop_signals();

    let mut storage = MaybeUninit::uninit();
    let mut open = RecordExitsSkelBuilder::default()
        .open(&mut storage)
        .map_err(|e| format!("opening the BPF object: {e}"))?;
    open.maps
        .records
        .set_max_entries(opts.buffer_mb << 20)
        .map_err(|e| format!("sizing the ring buffer: {e}"))?;
    let mut skel = open
        .load()
        .map_err(|e| format!("loading the BPF programs: {e}"))?;
    skel.attach()
        .map_err(|e| format!("attaching to do_exit() and set_mm_exe_file(): {e}"))?;
    eprintln!("buildid record-exits: recording until SIGINT or SIGTERM");

    let mut collector = Collector::default();
    let mut bad = 0u64;
    let mut write_error = None;
    {
        let mut builder = RingBufferBuilder::new();
        builder
            .add(&skel.maps.records, |data: &[u8]| {
                let Some(r) = Record::parse(data) else {
                    bad += 1;
                    return 0;
                };
                let lines = collector.add(r, &*keep, opts.json);
                if lines.is_empty() || write_error.is_some() {
                    return 0;
                }
                let written = lines
                    .iter()
                    .try_for_each(|l| writeln!(out, "{l}"))
                    .and_then(|()| out.flush());
                if let Err(e) = written {
                    write_error = Some(e);
                }
                0
            })
            .map_err(|e| format!("ring buffer: {e}"))?;
        let ring = builder.build().map_err(|e| format!("ring buffer: {e}"))?;
        while !STOP.load(Ordering::Relaxed) {
            if let Err(e) = ring.poll(Duration::from_millis(100)) {
                if e.kind() != libbpf_rs::ErrorKind::Interrupted {
                    return Err(format!("polling the ring buffer: {e}"));
                }
            }
        }
        // What the programs sent before the stop is still read.
        let _ = ring.consume();
    }
    if let Some(e) = write_error {
        return Err(format!("writing the records: {e}"));
    }
    // The programs' counters: mmapped, read after the ring buffer is drained.
    let (dropped_records, dropped_ends, walk_failures, claim_failures) = match &skel.maps.bss_data {
        Some(bss) => (
            bss.dropped_records,
            bss.dropped_ends,
            bss.walk_failures,
            bss.claim_failures,
        ),
        None => return Err("the BPF object has no counters (.bss not mapped)".into()),
    };
    // Each hook has two copies of its program: an image is lost only if both
    // skipped it, so the lesser count of misses bounds the loss.
    let exit = [
        prog_stats(&skel.progs.on_exit)?,
        prog_stats(&skel.progs.on_exit_again)?,
    ];
    let exec = [
        prog_stats(&skel.progs.on_exec)?,
        prog_stats(&skel.progs.on_exec_again)?,
    ];
    let lost = |p: &[ProgStats; 2]| p[0].recursion_misses.min(p[1].recursion_misses);
    eprintln!(
        "buildid record-exits: {} processes, {} mappings; lost: {} mappings, {} processes' ends \
         (ring buffer full), {} walks failed, {} records malformed, {} processes incomplete, \
         at most {} exits and {} execs not seen (both copies of their program were running \
         on that CPU); {} claims failed (recorded, maybe twice)",
        collector.processes,
        collector.mappings,
        dropped_records,
        dropped_ends,
        walk_failures,
        bad,
        collector.incomplete + collector.pending.len() as u64,
        lost(&exit),
        lost(&exec),
        claim_failures,
    );
    // With kernel.bpf_stats_enabled=1: what recording cost the exiting tasks.
    for (what, p) in [("do_exit()", &exit), ("exec (set_mm_exe_file())", &exec)] {
        let runs = p[0].runs + p[1].runs;
        let ns = p[0].run_time_ns + p[1].run_time_ns;
        if ns != 0 && runs != 0 {
            eprintln!(
                "buildid record-exits: {what}: {} calls of the programs, {} ns each",
                runs,
                ns / runs
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, pid: u32, start: u64, ret: i32, path: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(kind.to_ne_bytes());
        b.extend(EVENT_EXIT.to_ne_bytes());
        for v in [start, start + 0x1000, 0x2000u64, 42, 99] {
            b.extend(v.to_ne_bytes());
        }
        b.extend(((8u32 << 20) | 1).to_ne_bytes());
        b.extend(pid.to_ne_bytes());
        b.extend(ret.to_ne_bytes());
        b.extend(0u32.to_ne_bytes());
        b.extend(0u32.to_ne_bytes());
        b.extend(u32::try_from(path.len()).unwrap().to_ne_bytes());
        b.extend([0u8; 16]);
        let mut comm = [0u8; COMM_LEN];
        comm[..4].copy_from_slice(b"true");
        b.extend(comm);
        b.extend((1..=20u8).collect::<Vec<_>>());
        let mut p = vec![0u8; PATH_MAX + 256];
        p[..path.len()].copy_from_slice(path);
        b.extend(p);
        b
    }

    #[test]
    fn args() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            opts: Options,
        }
        let parse_args = |argv: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("record-exits").chain(argv.iter().copied()),
            )
            .map(|cli| cli.opts)
        };
        let o = parse_args(&["--json", "--comm", "^py", "-o", "/tmp/x"]).unwrap();
        assert!(o.json);
        assert_eq!(o.comm.as_deref(), Some("^py"));
        assert_eq!(o.output.as_deref(), Some("/tmp/x"));
        assert_eq!(o.buffer_mb, DEFAULT_BUFFER_MB);
        assert_eq!(parse_args(&["--buffer-mb", "128"]).unwrap().buffer_mb, 128);
        assert!(parse_args(&["--buffer-mb", "3"]).is_err());
        assert!(parse_args(&["--buffer-mb", "2048"]).is_err());
        assert!(parse_args(&["--buffer-mb"]).is_err());
        assert!(parse_args(&["--comm"]).is_err());
        assert!(parse_args(&["12"]).is_err());
    }

    #[test]
    fn paths_turn_around() {
        assert_eq!(
            path_from_leaf_up(b"libc.so.6/lib/usr/"),
            "/usr/lib/libc.so.6"
        );
        assert_eq!(path_from_leaf_up(b""), "/");
    }

    #[test]
    fn records_parse_and_format() {
        let r = Record::parse(&record(KIND_MAPPING, 7, 0x400000, 20, b"true/bin/usr/")).unwrap();
        assert_eq!(
            (r.pid, r.start, r.ino, r.path.as_str()),
            (7, 0x400000, 42, "/usr/bin/true")
        );
        assert_eq!(r.build_id, (1..=20u8).collect::<Vec<_>>());
        assert_eq!(
            format_mapping(&r, false),
            "exit 7 true 400000-401000 00002000 08:01 42 /usr/bin/true \
             0102030405060708090a0b0c0d0e0f1011121314"
        );
        let none = Record::parse(&record(KIND_MAPPING, 7, 0x400000, -libc::EAGAIN, b"x/")).unwrap();
        assert!(format_mapping(&none, false).ends_with(" /x - (not in the page cache yet)"));
        assert!(format_mapping(&none, true).ends_with(
            "\"path\":\"/x\",\"build_id\":null,\"error\":\"not in the page cache yet\"}"
        ));
        // A short record is refused, not read past its end.
        assert!(Record::parse(&record(KIND_END, 7, 0, 0, b"")[..100]).is_none());
    }

    #[test]
    fn a_process_is_printed_at_its_end() {
        let mut c = Collector::default();
        let all = |_: &str| true;
        let map = |start| Record::parse(&record(KIND_MAPPING, 9, start, 20, b"a/")).unwrap();
        assert!(c.add(map(0x2000), &all, false).is_empty());
        assert!(c.add(map(0x1000), &all, false).is_empty());
        let lines = c.add(
            Record::parse(&record(KIND_END, 9, 0, 0, b"")).unwrap(),
            &all,
            false,
        );
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].contains(" 1000-2000 "),
            "sorted by address: {lines:?}"
        );
        assert_eq!((c.processes, c.mappings, c.incomplete), (1, 2, 0));
        // --comm filters whole processes.
        let none = |_: &str| false;
        assert!(c.add(map(0x1000), &none, false).is_empty());
        let end = Record::parse(&record(KIND_END, 9, 0, 0, b"")).unwrap();
        assert!(c.add(end, &none, false).is_empty());
        assert!(c.pending.is_empty());
    }
}
