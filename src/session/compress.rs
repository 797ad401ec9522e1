//! Compressed session files. A session may be plain JSON Lines, zstd or gzip;
//! readers tell them apart by the first bytes (zstd 28 B5 2F FD, gzip 1F 8B),
//! never by the name, so a renamed file still reads. Writers choose by the
//! name (`.zst`, `.gz`). Every reader of a session file opens it with `open`.
//!
//! A compressed stream that stops mid-frame (a recorder killed before it
//! closed the file) decodes as far as it goes, then ends with a `Cut` error:
//! the reader counts it as a torn tail. Data that cannot be decoded ends with
//! an `Undecodable` error: the reader says so once and stops.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::Path;

use super::reader::SessionError;

pub const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
pub const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];

/// zstd level of recordings: fast enough to keep up with any event rate.
pub const ZSTD_LEVEL: i32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Plain,
    Zstd,
    Gzip,
}

impl Compression {
    /// What a stream starting with `first` holds.
    pub fn sniff(first: &[u8]) -> Compression {
        if first.starts_with(&ZSTD_MAGIC) {
            Compression::Zstd
        } else if first.starts_with(&GZIP_MAGIC) {
            Compression::Gzip
        } else {
            Compression::Plain
        }
    }

    /// What a file of this name is written as: `.zst` zstd, `.gz` gzip,
    /// anything else plain.
    pub fn for_name(path: &Path) -> Compression {
        match path.extension().and_then(|x| x.to_str()) {
            Some(x) if x.eq_ignore_ascii_case("zst") => Compression::Zstd,
            Some(x) if x.eq_ignore_ascii_case("gz") => Compression::Gzip,
            _ => Compression::Plain,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::Plain => "plain",
            Compression::Zstd => "zstd",
            Compression::Gzip => "gzip",
        }
    }
}

/// A file name a session may have: `.jsonl`, `.jsonl.zst` or `.jsonl.gz`.
pub fn is_session_name(path: &Path) -> bool {
    plain_name(path).is_some_and(|n| n.ends_with(".jsonl"))
}

/// The file name without a compression suffix (`x.jsonl.zst` → `x.jsonl`).
pub fn plain_name(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    Some(match Compression::for_name(path) {
        Compression::Plain => name,
        _ => &name[..name.rfind('.').unwrap_or(name.len())],
    })
}

/// How a compressed stream went wrong; travels inside an `io::Error`.
#[derive(Debug)]
pub enum Fault {
    /// The stream stops mid-frame: everything before was decoded.
    Cut { format: &'static str },
    /// The data is not what its magic says.
    Undecodable {
        format: &'static str,
        message: String,
    },
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Cut { format } => write!(f, "the {format} stream is cut short"),
            Fault::Undecodable { format, message } => {
                write!(f, "the {format} data cannot be decoded: {message}")
            }
        }
    }
}

impl std::error::Error for Fault {}

/// The compression fault an I/O error from a decoded stream carries, if any.
pub fn fault(e: &io::Error) -> Option<&Fault> {
    e.get_ref()?.downcast_ref::<Fault>()
}

/// The fault an error from a decoded stream carries, or the error itself.
pub fn into_fault(e: io::Error) -> Result<Fault, io::Error> {
    if fault(&e).is_none() {
        return Err(e);
    }
    let kind = e.kind();
    match e.into_inner().map(|inner| inner.downcast::<Fault>()) {
        Some(Ok(f)) => Ok(*f),
        Some(Err(inner)) => Err(io::Error::new(kind, inner)),
        None => Err(io::Error::from(kind)),
    }
}

/// Opens a session file, plain or compressed, for reading. Every reader of
/// session files goes through here.
pub fn open(path: &Path) -> Result<Box<dyn BufRead + Send>, SessionError> {
    let unreadable = |e| SessionError::Unreadable {
        path: path.into(),
        source: e,
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(SessionError::NotFound(path.into()));
        }
        Err(e) => return Err(unreadable(e)),
        Ok(m) if m.is_dir() => return Err(SessionError::IsDirectory(path.into())),
        // A device or a FIFO never ends or blocks: refused before a read.
        Ok(m) if !m.is_file() => {
            return Err(SessionError::NotAFile {
                path: path.into(),
                kind: special_kind(&m.file_type()),
            });
        }
        Ok(_) => {}
    }
    let file = File::open(path).map_err(unreadable)?;
    decode(BufReader::with_capacity(1 << 20, file)).map_err(unreadable)
}

/// What a file that is neither a regular file nor a directory is.
pub fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// `input` decoded as its first bytes say. The magic must be in the first
/// `fill_buf` (it is for a file or a slice).
pub fn decode<R: BufRead + Send + 'static>(mut input: R) -> io::Result<Box<dyn BufRead + Send>> {
    let kind = Compression::sniff(input.fill_buf()?);
    Ok(match kind {
        Compression::Plain => Box::new(input),
        Compression::Zstd => {
            let d = zstd::stream::read::Decoder::with_buffer(input)?;
            Box::new(BufReader::with_capacity(1 << 20, Faults::new(d, kind)))
        }
        Compression::Gzip => {
            let d = flate2::bufread::MultiGzDecoder::new(input);
            Box::new(BufReader::with_capacity(1 << 20, Faults::new(d, kind)))
        }
    })
}

/// A decoder whose errors say what went wrong as a `Fault`; after one, it
/// reads as ended.
struct Faults<R> {
    inner: R,
    format: &'static str,
    done: bool,
}

impl<R> Faults<R> {
    fn new(inner: R, kind: Compression) -> Faults<R> {
        Faults {
            inner,
            format: kind.name(),
            done: false,
        }
    }
}

impl<R: Read> Read for Faults<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => {
                self.done = true;
                let kind = e.kind();
                let format = self.format;
                let fault = if kind == io::ErrorKind::UnexpectedEof {
                    Fault::Cut { format }
                } else {
                    Fault::Undecodable {
                        format,
                        message: e.to_string(),
                    }
                };
                Err(io::Error::new(kind, fault))
            }
            ok => ok,
        }
    }
}

/// A session file being written, compressed as its name says. Every `flush`
/// leaves a file that decodes up to there (zstd ends its block, gzip does a
/// sync flush); `finish` ends the frame.
pub(crate) enum Writer {
    Plain(io::BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, io::BufWriter<File>>),
    Gzip(flate2::write::GzEncoder<io::BufWriter<File>>),
}

impl Writer {
    pub(crate) fn new(file: File, kind: Compression) -> io::Result<Writer> {
        let out = io::BufWriter::new(file);
        Ok(match kind {
            Compression::Plain => Writer::Plain(out),
            Compression::Zstd => {
                let mut e = zstd::stream::write::Encoder::new(out, ZSTD_LEVEL)?;
                e.include_checksum(true)?;
                Writer::Zstd(e)
            }
            Compression::Gzip => Writer::Gzip(flate2::write::GzEncoder::new(
                out,
                flate2::Compression::default(),
            )),
        })
    }

    /// Ends the stream (a compressed frame's end and checksum) and flushes.
    pub(crate) fn finish(self) -> io::Result<()> {
        let mut out = match self {
            Writer::Plain(w) => w,
            Writer::Zstd(e) => e.finish()?,
            Writer::Gzip(e) => e.finish()?,
        };
        out.flush()
    }
}

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Writer::Plain(w) => w.write(buf),
            Writer::Zstd(w) => w.write(buf),
            Writer::Gzip(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Writer::Plain(w) => w.write_all(buf),
            Writer::Zstd(w) => w.write_all(buf),
            Writer::Gzip(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Writer::Plain(w) => w.flush(),
            Writer::Zstd(w) => w.flush(),
            Writer::Gzip(w) => w.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_and_fifos_are_refused_before_a_read() {
        // /dev/zero never ends and a FIFO with no writer blocks: both would hang.
        let e = open(Path::new("/dev/zero")).err().expect("refused");
        assert!(
            e.to_string()
                .contains("is a character device, not a session file"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("s.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = open(&fifo).err().expect("refused");
            assert!(e.to_string().contains("FIFO (named pipe)"), "{e}");
        }
    }

    #[test]
    fn magic_not_name_decides_how_a_stream_reads() {
        assert_eq!(
            Compression::sniff(&[0x28, 0xB5, 0x2F, 0xFD, 0]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(&[0x1F, 0x8B, 8]), Compression::Gzip);
        assert_eq!(Compression::sniff(b"{\"t_us\""), Compression::Plain);
        assert_eq!(Compression::sniff(&[0x28, 0xB5]), Compression::Plain);
        assert_eq!(Compression::sniff(b""), Compression::Plain);
    }

    #[test]
    fn names_say_how_a_file_is_written() {
        let of = |n: &str| Compression::for_name(Path::new(n));
        assert_eq!(of("a/x.jsonl.zst"), Compression::Zstd);
        assert_eq!(of("x.jsonl.ZST"), Compression::Zstd);
        assert_eq!(of("x.jsonl.gz"), Compression::Gzip);
        assert_eq!(of("x.jsonl"), Compression::Plain);
        assert_eq!(of("zst"), Compression::Plain);
        for (name, session, plain) in [
            (
                "s/20261125-034401_H100_tour.jsonl.zst",
                true,
                "20261125-034401_H100_tour.jsonl",
            ),
            ("x.jsonl.gz", true, "x.jsonl"),
            ("x.jsonl", true, "x.jsonl"),
            ("x.json.zst", false, "x.json"),
            ("notes.txt", false, "notes.txt"),
        ] {
            assert_eq!(is_session_name(Path::new(name)), session, "{name}");
            assert_eq!(plain_name(Path::new(name)), Some(plain), "{name}");
        }
    }

    fn decoded(bytes: Vec<u8>) -> (Vec<u8>, Option<String>) {
        let mut r = decode(io::Cursor::new(bytes)).unwrap();
        let mut out = Vec::new();
        let err = r.read_to_end(&mut out).err().map(|e| {
            fault(&e)
                .map(|f| format!("{f:?}"))
                .unwrap_or_else(|| format!("not a fault: {e}"))
        });
        (out, err)
    }

    #[test]
    fn every_flush_is_decodable_and_a_cut_frame_says_so() {
        for kind in [Compression::Zstd, Compression::Gzip] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("w");
            let mut w = Writer::new(File::create(&path).unwrap(), kind).unwrap();
            w.write_all(b"one\n").unwrap();
            w.flush().unwrap();
            w.write_all(b"two\n").unwrap();
            w.flush().unwrap();
            // Not finished: a killed recorder.
            let cut = std::fs::read(&path).unwrap();
            assert_eq!(Compression::sniff(&cut), kind);
            let (out, err) = decoded(cut);
            assert_eq!(out, b"one\ntwo\n", "{kind:?}");
            assert!(err.is_some_and(|e| e.starts_with("Cut")), "{kind:?}");
            w.finish().unwrap();
            let (out, err) = decoded(std::fs::read(&path).unwrap());
            assert_eq!(
                (out.as_slice(), err),
                (&b"one\ntwo\n"[..], None),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn garbage_after_a_magic_is_undecodable_not_a_panic() {
        for magic in [&ZSTD_MAGIC[..], &GZIP_MAGIC[..]] {
            let mut bytes = magic.to_vec();
            bytes.extend(b"this is not compressed data, only text after the magic\n");
            let (_, err) = decoded(bytes);
            assert!(
                err.as_deref().is_some_and(|e| e.starts_with("Undecodable")),
                "{err:?}"
            );
        }
    }
}
