#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0
#
# The second process procmap_bench profiles in make bench: perl with about
# thirty XS modules loaded (about 190 mappings of 47 files) and a loop that
# works in many of them.  Prints "ready" once everything is loaded, then
# works until killed.

use strict;
use warnings;
use POSIX (); use Storable (); use Encode (); use Digest::SHA (); use Digest::MD5 ();
use Data::Dumper (); use List::Util (); use Time::HiRes (); use Socket (); use IO::Handle;
use Fcntl (); use Compress::Raw::Zlib (); use MIME::Base64 (); use Sys::Hostname (); use File::Glob ();
use Hash::Util (); use Scalar::Util (); use Unicode::Normalize (); use Math::BigInt (); use JSON::PP ();
use threads (); use Compress::Raw::Bzip2 (); use IPC::SysV (); use I18N::Langinfo (); use Time::Piece ();
use Encode::JP (); use Encode::CN (); use PerlIO::scalar (); use re (); use attributes ();
$| = 1; print "ready\n";
my $text = join " ", map { $_ * 7919 } 0 .. 2000;
my $n = 0;
while (1) {
	Digest::SHA::sha256_hex($text); Digest::MD5::md5_hex($text);
	my $d = Compress::Raw::Zlib::Deflate->new; my $o; $d->deflate(substr($text, 0, 4000), $o); $d->flush($o);
	Storable::thaw(Storable::freeze({ n => $n, l => [1 .. 100] }));
	Encode::encode("shift_jis", "\x{6f22}\x{5b57}"); Encode::decode("UTF-8", "caf\xc3\xa9");
	Unicode::Normalize::NFD("\x{e9}t\x{e9}"); MIME::Base64::encode_base64($text);
	List::Util::sum(1 .. 200); POSIX::floor($n / 3); Data::Dumper::Dumper([$n]) if $n % 20 == 0;
	JSON::PP::decode_json(JSON::PP::encode_json({ n => $n })); $n++;
}
