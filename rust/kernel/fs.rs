// SPDX-License-Identifier: GPL-2.0

//! Kernel file systems.
//!
//! C header: [`include/linux/fs.h`](srctree/include/linux/fs.h)

pub mod address_space;
pub mod file;
pub mod inode;
pub mod super_block;

pub use self::file::{File, LocalFile};
