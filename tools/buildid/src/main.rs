// SPDX-License-Identifier: GPL-2.0

//! `buildid PID [ADDR...]`: the VMAs of a process with their ELF build IDs,
//! as the kernel reports them through the PROCMAP_QUERY ioctl.

mod procmap;

use procmap::{Maps, Vma, FILE_BACKED_VMA, VMA_EXECUTABLE};
use std::process::ExitCode;

const USAGE: &str = "usage: buildid [--json] PID [ADDR...]";

struct Args {
    json: bool,
    pid: u32,
    addrs: Vec<u64>,
}

fn parse_addr(s: &str) -> Result<u64, String> {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    u64::from_str_radix(hex, 16).map_err(|_| format!("bad address '{s}' (hex expected)"))
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut json = false;
    let mut rest = Vec::new();
    for a in argv {
        match a.as_str() {
            "--json" => json = true,
            "-h" | "--help" => return Err(USAGE.to_string()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}\n{USAGE}")),
            s => rest.push(s),
        }
    }
    let (pid, addrs) = rest.split_first().ok_or_else(|| USAGE.to_string())?;
    let pid = pid.parse().map_err(|_| format!("bad pid '{pid}'"))?;
    let addrs = addrs
        .iter()
        .map(|a| parse_addr(a))
        .collect::<Result<_, _>>()?;
    Ok(Args { json, pid, addrs })
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

fn run(args: &Args) -> Result<(), String> {
    let maps = Maps::open(args.pid).map_err(|e| format!("/proc/{}/maps: {e}", args.pid))?;
    let describe = |e: std::io::Error| match e.raw_os_error() {
        Some(libc::ENOTTY) => "PROCMAP_QUERY is not supported by this kernel (ENOTTY)".to_string(),
        _ => format!("PROCMAP_QUERY: {e}"),
    };
    let mut rows: Vec<(Option<u64>, Vma)> = Vec::new();
    if args.addrs.is_empty() {
        for vma in maps
            .all(FILE_BACKED_VMA | VMA_EXECUTABLE)
            .map_err(describe)?
        {
            rows.push((None, vma));
        }
    } else {
        for &addr in &args.addrs {
            match maps.query(addr, 0).map_err(describe)? {
                Some(vma) => rows.push((Some(addr), vma)),
                None => return Err(format!("no mapping at 0x{addr:x}")),
            }
        }
    }
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
    let result = parse_args(&argv).and_then(|args| run(&args));
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
        assert!(a.json);
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
