// SPDX-License-Identifier: GPL-2.0

//! `buildid PID [ADDR...]`: the VMAs of a process with their ELF build IDs,
//! as the kernel reports them through the PROCMAP_QUERY ioctl; without it
//! (`ENOTTY`, kernels before 6.11), from `/proc/<pid>/maps` and the mapped
//! files read in user space. `buildid --file PATH` reads one file's build ID.

mod elffile;
mod procmap;
mod record_exits;
mod textmaps;

use clap::{Parser, Subcommand};
use procmap::{Maps, Vma, FILE_BACKED_VMA, VMA_EXECUTABLE};
use serde::Serialize;
use std::process::ExitCode;

/// Print the build IDs of a process' file mappings, as the kernel reports them through the
/// PROCMAP_QUERY ioctl of /proc/PID/maps, or record them as processes exit.
#[derive(Debug, Parser)]
#[command(
    name = "buildid",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "For each ADDR (hex), the VMA covering it: range, permissions, file offset, \
                  build ID and path; without ADDR, every file-backed executable mapping."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    show: Args,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Record the executable file mappings of every process that exits or execs, with their
    /// build IDs, until SIGINT or SIGTERM
    #[command(long_about = record_exits::LONG_ABOUT)]
    RecordExits(record_exits::Options),
}

/// What `buildid [--json] [--fallback] PID [ADDR...]` and `buildid --file PATH` ask for.
#[derive(Debug, clap::Args)]
struct Args {
    /// One JSON object per line
    #[arg(long)]
    json: bool,
    /// Read /proc/PID/maps and the mapped files instead of using PROCMAP_QUERY, as is done
    /// when the kernel lacks it (ENOTTY, before 6.11)
    #[arg(long, conflicts_with = "file")]
    fallback: bool,
    /// Print one file's build ID, read in user space
    #[arg(long, value_name = "PATH", conflicts_with_all = ["pid", "addrs"])]
    file: Option<String>,
    /// The process whose mappings to print
    #[arg(required_unless_present = "file")]
    pid: Option<u32>,
    /// Addresses (hex, with or without 0x) whose mappings to print
    #[arg(value_name = "ADDR", value_parser = parse_addr)]
    addrs: Vec<u64>,
}

impl Args {
    fn pid(&self) -> u32 {
        // Required unless --file, which returns before any use of the PID.
        self.pid.unwrap_or(0)
    }
}

fn parse_addr(s: &str) -> Result<u64, String> {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(hex, 16).map_err(|_| format!("bad address '{s}' (hex expected)"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text_line(addr: Option<u64>, vma: &Vma) -> String {
    let id = if vma.build_id.is_empty() {
        "-".to_string()
    } else {
        hex(&vma.build_id)
    };
    let at = addr.map(|a| format!("{a:x} ")).unwrap_or_default();
    format!(
        "{at}{:x}-{:x} {} {:08x} {id} {}",
        vma.start,
        vma.end,
        vma.perms(),
        vma.offset,
        vma.name
    )
}

/// One VMA as `--json` prints it.
#[derive(Serialize)]
struct VmaLine<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    addr: Option<String>,
    start: String,
    end: String,
    perms: String,
    offset: String,
    build_id: Option<String>,
    path: &'a str,
}

fn json_line(addr: Option<u64>, vma: &Vma) -> String {
    let line = VmaLine {
        addr: addr.map(|a| format!("0x{a:x}")),
        start: format!("0x{:x}", vma.start),
        end: format!("0x{:x}", vma.end),
        perms: vma.perms(),
        offset: format!("0x{:x}", vma.offset),
        build_id: (!vma.build_id.is_empty()).then(|| hex(&vma.build_id)),
        path: &vma.name,
    };
    serde_json::to_string(&line).unwrap_or_default()
}

/// The rows to print, from PROCMAP_QUERY.
fn rows_from_ioctl(maps: &Maps, args: &Args) -> std::io::Result<Vec<(Option<u64>, Vma)>> {
    let mut rows = Vec::new();
    if args.addrs.is_empty() {
        for vma in maps.all(FILE_BACKED_VMA | VMA_EXECUTABLE)? {
            rows.push((None, vma));
        }
    } else {
        for &addr in &args.addrs {
            match maps.query(addr, 0)? {
                Some(vma) => rows.push((Some(addr), vma)),
                None => {
                    let msg = format!("no mapping at 0x{addr:x}");
                    return Err(std::io::Error::new(std::io::ErrorKind::NotFound, msg));
                }
            }
        }
    }
    Ok(rows)
}

/// The rows to print, from the text of /proc/PID/maps and the files.
fn rows_from_text(args: &Args) -> Result<Vec<(Option<u64>, Vma)>, String> {
    let vmas = textmaps::read(args.pid()).map_err(|e| format!("/proc/{}/maps: {e}", args.pid()))?;
    let mut rows = Vec::new();
    if args.addrs.is_empty() {
        for vma in vmas {
            if textmaps::file_backed(&vma) && vma.flags & VMA_EXECUTABLE != 0 {
                rows.push((None, vma));
            }
        }
    } else {
        for &addr in &args.addrs {
            let vma = vmas
                .iter()
                .find(|v| v.start <= addr && addr < v.end)
                .ok_or_else(|| format!("no mapping at 0x{addr:x}"))?;
            rows.push((Some(addr), vma.clone()));
        }
    }
    for (_, vma) in &mut rows {
        textmaps::add_build_id(args.pid(), vma);
    }
    Ok(rows)
}

fn print_file(args: &Args, path: &str) -> Result<(), String> {
    let id = elffile::build_id(path).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) => format!("{path}: not an ELF file with a build ID"),
        _ => format!("{path}: {e}"),
    })?;
    if args.json {
        #[derive(Serialize)]
        struct FileLine<'a> {
            path: &'a str,
            build_id: String,
        }
        let line = FileLine {
            path,
            build_id: hex(&id),
        };
        println!("{}", serde_json::to_string(&line).unwrap_or_default());
    } else {
        println!("{} {path}", hex(&id));
    }
    Ok(())
}

fn run(args: &Args) -> Result<(), String> {
    if let Some(path) = &args.file {
        return print_file(args, path);
    }
    let rows = if args.fallback {
        rows_from_text(args)?
    } else {
        let maps = Maps::open(args.pid()).map_err(|e| format!("/proc/{}/maps: {e}", args.pid()))?;
        match rows_from_ioctl(&maps, args) {
            Ok(rows) => rows,
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
                eprintln!(
                    "buildid: PROCMAP_QUERY is not supported by this kernel (ENOTTY); \
                     using /proc/{}/maps and reading the files in user space",
                    args.pid()
                );
                rows_from_text(args)?
            }
            // Our own "no mapping at ADDR" (the kernel's errors carry an errno).
            Err(e) if e.raw_os_error().is_none() => return Err(e.to_string()),
            Err(e) => return Err(format!("PROCMAP_QUERY: {e}")),
        }
    };
    for (addr, vma) in &rows {
        let line = if args.json {
            json_line(*addr, vma)
        } else {
            text_line(*addr, vma)
        };
        println!("{line}");
    }
    Ok(())
}

fn main() -> ExitCode {
    // Usage errors, --help and --version exit here, with clap's message and status.
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::RecordExits(opts)) => record_exits::run(opts),
        None => run(&cli.show),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("buildid: {msg}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(argv: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("buildid").chain(argv.iter().copied()))
    }

    #[test]
    fn args() {
        let a = parse(&["--json", "12", "0x400000", "7fff"]).unwrap().show;
        assert!(a.json && !a.fallback);
        assert_eq!(a.pid, Some(12));
        assert_eq!(a.addrs, vec![0x400000, 0x7fff]);
        let f = parse(&["--file", "/bin/sh"]).unwrap().show;
        assert_eq!(f.file.as_deref(), Some("/bin/sh"));
        assert!(parse(&["--file"]).is_err());
        assert!(parse(&["--file", "/bin/sh", "1"]).is_err());
        assert!(parse(&["--file", "/bin/sh", "--fallback"]).is_err());
        assert!(parse(&["--fallback", "1"]).unwrap().show.fallback);
        assert!(parse(&[]).is_err());
        assert!(parse(&["x"]).is_err());
        assert!(parse(&["1", "zz"]).is_err());
        assert!(parse(&["--bogus", "1"]).is_err());
    }

    #[test]
    fn subcommand() {
        let cli = parse(&["record-exits", "--json", "-o", "/tmp/x"]).unwrap();
        assert!(matches!(cli.command, Some(Command::RecordExits(ref o)) if o.json));
        // The subcommand's options are its own.
        assert!(parse(&["--json", "record-exits"]).is_err());
        assert!(parse(&["record-exits", "12"]).is_err());
    }

    #[test]
    fn help_lists_every_command() {
        let help = parse(&["--help"]).unwrap_err();
        assert_eq!(help.kind(), clap::error::ErrorKind::DisplayHelp);
        let text = help.to_string();
        for word in [
            "record-exits",
            "--json",
            "--fallback",
            "--file",
            "PID",
            "ADDR",
        ] {
            assert!(text.contains(word), "--help lacks {word}:\n{text}");
        }
        Cli::command().debug_assert();
    }

    #[test]
    fn text_format() {
        let vma = Vma {
            start: 0x1000,
            end: 0x2000,
            flags: procmap::VMA_READABLE | VMA_EXECUTABLE,
            offset: 0x3000,
            inode: 1,
            dev: (0, 1),
            name: "/bin/x".into(),
            build_id: vec![0xab, 0x01],
        };
        assert_eq!(text_line(None, &vma), "1000-2000 r-xp 00003000 ab01 /bin/x");
        assert_eq!(
            json_line(Some(0x1800), &vma),
            "{\"addr\":\"0x1800\",\"start\":\"0x1000\",\"end\":\"0x2000\",\"perms\":\"r-xp\",\"offset\":\"0x3000\",\"build_id\":\"ab01\",\"path\":\"/bin/x\"}"
        );
        let odd = Vma {
            name: "/tmp/a\"b\\c\n\u{1}".into(),
            build_id: Vec::new(),
            ..vma
        };
        assert_eq!(
            json_line(None, &odd),
            "{\"start\":\"0x1000\",\"end\":\"0x2000\",\"perms\":\"r-xp\",\"offset\":\"0x3000\",\"build_id\":null,\"path\":\"/tmp/a\\\"b\\\\c\\n\\u0001\"}"
        );
    }
}
