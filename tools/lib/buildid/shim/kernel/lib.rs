// SPDX-License-Identifier: GPL-2.0

//! The part of the kernel crate that `lib/buildid/elf.rs` and `lib/buildid/freader.rs` use, for
//! their host builds: `kernel::error`, with the names, values and conversions of
//! `rust/kernel/error.rs` for the error numbers the parser returns.

#![forbid(unsafe_code)]

/// `rust/kernel/error.rs`, as far as the parser uses it.
pub mod error {
    use core::{fmt, num::NonZeroI32};

    /// A kernel error: a negative errno in `-MAX_ERRNO..=-1`.
    #[derive(Clone, Copy, PartialEq, Eq)]
    pub struct Error(NonZeroI32);

    /// `MAX_ERRNO`.
    const MAX_ERRNO: i32 = 4095;

    impl Error {
        /// The error of `errno`, a negative errno; [`code::EINVAL`] if it is not one, as in the
        /// kernel.
        pub fn from_errno(errno: i32) -> Error {
            if !(-MAX_ERRNO..0).contains(&errno) {
                return code::EINVAL;
            }
            NonZeroI32::new(errno).map_or(code::EINVAL, Error)
        }

        /// The negative errno.
        pub fn to_errno(self) -> i32 {
            self.0.get()
        }

        /// The name of a known error number.
        fn name(self) -> Option<&'static str> {
            code::NAMES
                .iter()
                .find(|(error, _)| *error == self)
                .map(|(_, name)| *name)
        }
    }

    impl fmt::Debug for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.name() {
                Some(name) => f.write_str(name),
                None => f.debug_tuple("Error").field(&self.0.get()).finish(),
            }
        }
    }

    /// `kernel::error::Result`.
    pub type Result<T = (), E = Error> = core::result::Result<T, E>;

    /// The error codes the parser and its readers return: `include/uapi/asm-generic/errno-base.h`
    /// and `errno.h`, the numbers of x86, arm64, riscv and most other architectures.
    pub mod code {
        use super::Error;
        use core::num::NonZeroI32;

        const fn known(errno: i32) -> Error {
            match NonZeroI32::new(-errno) {
                Some(errno) => Error(errno),
                None => Error(NonZeroI32::MIN),
            }
        }

        /// I/O error: a short read.
        pub const EIO: Error = known(5);
        /// Argument list too long: a fetch longer than a reader's bounce buffer.
        pub const E2BIG: Error = known(7);
        /// Bad address: data not in the page cache, or a `memfd_secret()` file.
        pub const EFAULT: Error = known(14);
        /// Invalid argument: not a supported ELF file, or no build ID note.
        pub const EINVAL: Error = known(22);
        /// Math result not representable: a read past the end of a memory buffer.
        pub const ERANGE: Error = known(34);
        /// Value too large for defined data type: a fetch whose end wraps around.
        pub const EOVERFLOW: Error = known(75);

        pub(super) const NAMES: [(Error, &str); 6] = [
            (EIO, "EIO"),
            (E2BIG, "E2BIG"),
            (EFAULT, "EFAULT"),
            (EINVAL, "EINVAL"),
            (ERANGE, "ERANGE"),
            (EOVERFLOW, "EOVERFLOW"),
        ];
    }
}
