// SPDX-License-Identifier: GPL-2.0

//! `buildid PID [ADDR...]`: the VMAs of a process with their ELF build IDs,
//! as the kernel reports them through the PROCMAP_QUERY ioctl; without it
//! (`ENOTTY`, kernels before 6.11), from `/proc/<pid>/maps` and the mapped
//! files read in user space. `buildid --file PATH` reads one file's build ID.

mod elffile;
mod procmap;
mod record_exits;
mod textmaps;

use procmap::{Maps, Vma, FILE_BACKED_VMA, VMA_EXECUTABLE};
use std::process::ExitCode;

const USAGE: &str = "usage: buildid [--json] [--fallback] PID [ADDR...]
       buildid [--json] --file PATH

For each ADDR (hex), the VMA covering it: range, permissions, file offset,
build ID and path; without ADDR, every file-backed executable mapping.
--fallback reads /proc/PID/maps and the files instead of using PROCMAP_QUERY,
as is done when the kernel lacks it.";

struct Args {
    json: bool,
    fallback: bool,
    file: Option<String>,
    pid: u32,
    addrs: Vec<u64>,
}

fn parse_addr(s: &str) -> Result<u64, String> {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(hex, 16).map_err(|_| format!("bad address '{s}' (hex expected)"))
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut json = false;
    let mut fallback = false;
    let mut file = None;
    let mut rest = Vec::new();
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = true,
            "--fallback" => fallback = true,
            "--file" => {
                let path = it.next().ok_or("--file needs a PATH")?;
                file = Some(path.clone());
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            s => rest.push(s),
        }
    }
    if file.is_some() {
        if !rest.is_empty() || fallback {
            return Err(format!("--file takes no PID, ADDR or --fallback\n{USAGE}"));
        }
        return Ok(Args {
            json,
            fallback,
            file,
            pid: 0,
            addrs: Vec::new(),
        });
    }
    let (pid, addrs) = rest.split_first().ok_or_else(|| USAGE.to_string())?;
    let pid = pid.parse().map_err(|_| format!("bad pid '{pid}'"))?;
    let addrs = addrs
        .iter()
        .map(|a| parse_addr(a))
        .collect::<Result<_, _>>()?;
    Ok(Args {
        json,
        fallback,
        file,
        pid,
        addrs,
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

fn json_line(addr: Option<u64>, vma: &Vma) -> String {
    let at = addr
        .map(|a| format!("\"addr\":\"0x{a:x}\","))
        .unwrap_or_default();
    format!(
        "{{{at}\"start\":\"0x{:x}\",\"end\":\"0x{:x}\",\"perms\":\"{}\",\"offset\":\"0x{:x}\",\"build_id\":{},\"path\":{}}}",
        vma.start,
        vma.end,
        vma.perms(),
        vma.offset,
        if vma.build_id.is_empty() {
            "null".to_string()
        } else {
            json_str(&hex(&vma.build_id))
        },
        json_str(&vma.name)
    )
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
    let vmas = textmaps::read(args.pid).map_err(|e| format!("/proc/{}/maps: {e}", args.pid))?;
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
        textmaps::add_build_id(args.pid, vma);
    }
    Ok(rows)
}

fn print_file(args: &Args, path: &str) -> Result<(), String> {
    let id = elffile::build_id(path).map_err(|e| match e.raw_os_error() {
        Some(libc::EINVAL) => format!("{path}: not an ELF file with a build ID"),
        _ => format!("{path}: {e}"),
    })?;
    if args.json {
        println!(
            "{{\"path\":{},\"build_id\":{}}}",
            json_str(path),
            json_str(&hex(&id))
        );
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
        let maps = Maps::open(args.pid).map_err(|e| format!("/proc/{}/maps: {e}", args.pid))?;
        match rows_from_ioctl(&maps, args) {
            Ok(rows) => rows,
            Err(e) if e.raw_os_error() == Some(libc::ENOTTY) => {
                eprintln!(
                    "buildid: PROCMAP_QUERY is not supported by this kernel (ENOTTY); \
                     using /proc/{}/maps and reading the files in user space",
                    args.pid
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
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = match argv.split_first() {
        Some((cmd, rest)) if cmd == "record-exits" => {
            record_exits::parse_args(rest).and_then(|opts| record_exits::run(&opts))
        }
        _ => parse_args(&argv).and_then(|args| run(&args)),
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

    #[test]
    fn args() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let a = parse_args(&v(&["--json", "12", "0x400000", "7fff"])).unwrap();
        assert!(a.json && !a.fallback);
        let f = parse_args(&v(&["--file", "/bin/sh"])).unwrap();
        assert_eq!(f.file.as_deref(), Some("/bin/sh"));
        assert!(parse_args(&v(&["--file"])).is_err());
        assert!(parse_args(&v(&["--file", "/bin/sh", "1"])).is_err());
        assert!(parse_args(&v(&["--fallback", "1"])).unwrap().fallback);
        assert_eq!(a.pid, 12);
        assert_eq!(a.addrs, vec![0x400000, 0x7fff]);
        assert!(parse_args(&v(&[])).is_err());
        assert!(parse_args(&v(&["x"])).is_err());
        assert!(parse_args(&v(&["1", "zz"])).is_err());
        assert!(parse_args(&v(&["--bogus", "1"])).is_err());
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_str("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
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
    }
}
