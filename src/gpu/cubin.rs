//! Reading a cubin (an ELF file) without a GPU: an initialized
//! `__constant__` (the bundled kernel states its shared-memory need in
//! `attn_smem_bytes`, so `build` and the tests can read it where there is
//! nothing to load the module on), and an entry point's parameter sizes
//! from its `.nv.info.<entry>` section, to check the kernel ABI.

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// One section header's fields that matter here.
struct Section {
    name: usize,
    kind: u32,
    offset: usize,
    size: usize,
    link: usize,
}

fn sections(b: &[u8]) -> Option<Vec<Section>> {
    // ELF64, little endian.
    if b.get(0..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let shoff = u64_at(b, 0x28)? as usize;
    let shentsize = u16_at(b, 0x3A)? as usize;
    let shnum = u16_at(b, 0x3C)? as usize;
    (0..shnum)
        .map(|i| {
            let h = shoff.checked_add(i.checked_mul(shentsize)?)?;
            Some(Section {
                name: u32_at(b, h)? as usize,
                kind: u32_at(b, h + 4)?,
                offset: u64_at(b, h + 24)? as usize,
                size: u64_at(b, h + 32)? as usize,
                link: u32_at(b, h + 40)? as usize,
            })
        })
        .collect()
}

/// The 4-byte little-endian value of symbol `name`, if the cubin defines
/// it with initialized data; None for anything else (never panics).
pub fn read_u32_symbol(cubin: &[u8], name: &str) -> Option<u32> {
    const SHT_SYMTAB: u32 = 2;
    const SHT_NOBITS: u32 = 8;
    const SYM_SIZE: usize = 24;
    let secs = sections(cubin)?;
    let symtab = secs.iter().find(|s| s.kind == SHT_SYMTAB)?;
    let strtab = secs.get(symtab.link)?;
    let names = cubin.get(strtab.offset..strtab.offset.checked_add(strtab.size)?)?;
    for i in 0..symtab.size / SYM_SIZE {
        let at = symtab.offset.checked_add(i * SYM_SIZE)?;
        let name_at = u32_at(cubin, at)? as usize;
        let end = names.get(name_at..)?.iter().position(|&c| c == 0)?;
        if &names[name_at..name_at + end] != name.as_bytes() {
            continue;
        }
        let shndx = u16_at(cubin, at + 6)? as usize;
        let value = u64_at(cubin, at + 8)? as usize;
        let sec = secs.get(shndx)?;
        if sec.kind == SHT_NOBITS {
            return None;
        }
        return u32_at(cubin, sec.offset.checked_add(value)?);
    }
    None
}

/// The sections that hold the code and what the driver reads with it
/// (`.text.*`, `.nv.info*`, `.nv.constant*`), by name, in file order:
/// two builds of one kernel with the same of these run the same. Debug
/// sections (-lineinfo) are left out: they name source files and lines.
pub fn code_sections(b: &[u8]) -> Option<Vec<(String, &[u8])>> {
    const SHT_NOBITS: u32 = 8;
    let secs = sections(b)?;
    let names = secs.get(u16_at(b, 0x3E)? as usize)?;
    let table = b.get(names.offset..names.offset.checked_add(names.size)?)?;
    let mut out = Vec::new();
    for s in &secs {
        let rest = table.get(s.name..)?;
        let name = String::from_utf8_lossy(&rest[..rest.iter().position(|&c| c == 0)?]);
        let code = [".text.", ".nv.info", ".nv.constant"]
            .iter()
            .any(|p| name.starts_with(p));
        if code && s.kind != SHT_NOBITS {
            out.push((
                name.into_owned(),
                b.get(s.offset..s.offset.checked_add(s.size)?)?,
            ));
        }
    }
    Some(out)
}

/// The bytes of the section called `name`, if the cubin has one.
fn section<'a>(b: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let secs = sections(b)?;
    let names = secs.get(u16_at(b, 0x3E)? as usize)?;
    let table = b.get(names.offset..names.offset.checked_add(names.size)?)?;
    secs.iter().find_map(|s| {
        let rest = table.get(s.name..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        (&rest[..end] == name.as_bytes())
            .then(|| b.get(s.offset..s.offset.checked_add(s.size)?))
            .flatten()
    })
}

/// The byte size of each parameter of `entry`, in order, from the
/// EIATTR_KPARAM_INFO records of its `.nv.info.<entry>` section (format 4
/// records: attribute 0x17, a 12-byte value whose ordinal is at 4 and whose
/// size is bits 18.. of the word at 8). None when the cubin has no such entry.
pub fn param_sizes(cubin: &[u8], entry: &str) -> Option<Vec<u32>> {
    const EIFMT_SVAL: u8 = 4;
    const EIATTR_KPARAM_INFO: u8 = 0x17;
    let info = section(cubin, &format!(".nv.info.{entry}"))?;
    let mut params = Vec::new();
    let mut at = 0;
    while at + 4 <= info.len() {
        let (fmt, attr) = (info[at], info[at + 1]);
        if fmt != EIFMT_SVAL {
            at += 4;
            continue;
        }
        let len = u16_at(info, at + 2)? as usize;
        let value = info.get(at + 4..at + 4 + len)?;
        if attr == EIATTR_KPARAM_INFO && len >= 12 {
            let ordinal = u16_at(value, 4)?;
            let size = (u32_at(value, 8)? >> 18) & 0x3FFF;
            params.push((ordinal, size));
        }
        at += 4 + len;
    }
    params.sort_unstable();
    Some(params.into_iter().map(|(_, size)| size).collect())
}

/// Kernel ABI 1 (docs/kernel-abi.md): Q, K, V, O pointers, then int S,
/// float scale·log2(e), int causal.
pub const ABI: &str =
    "(const half* Q, const half* K, const half* V, half* O, int S, float scale_log2, int causal)";
/// Kernel ABI 2: the element type from ATTN_BF16, both lengths and both head
/// counts, the causal mask aligned to the end.
pub const ABI2: &str = "(const attn_t* Q, const attn_t* K, const attn_t* V, attn_t* O, int Sq, int Sk, int Hq, int Hkv, float scale_log2, int causal)";

/// The parameters and their byte sizes of kernel ABI `abi` (1 or 2).
pub fn abi_params(abi: u32) -> (&'static str, &'static [u32]) {
    if abi >= 2 {
        (ABI2, &[8, 8, 8, 8, 4, 4, 4, 4, 4, 4])
    } else {
        (ABI, &[8, 8, 8, 8, 4, 4, 4])
    }
}

/// Whether `entry` in the cubin takes kernel ABI `abi`'s parameters; the
/// error says what is missing or different.
pub fn check_abi(cubin: &[u8], entry: &str, abi: u32) -> Result<(), String> {
    let (text, want) = abi_params(abi);
    let Some(sizes) = param_sizes(cubin, entry) else {
        return Err(format!(
            "the cubin has no kernel named {entry}: declare extern \"C\" __global__ void {entry}{text}"
        ));
    };
    if sizes != want {
        let list = |s: &[u32]| s.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "{entry} takes {} parameter{} of {} bytes; kernel ABI {abi} (the manifest's abi) is {entry}{text}, {} parameters of {} bytes (docs/kernel-abi.md)",
            sizes.len(),
            if sizes.len() == 1 { "" } else { "s" },
            if sizes.is_empty() {
                "no".to_string()
            } else {
                list(&sizes)
            },
            want.len(),
            list(want)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64: null section, .data holding 0x12345678 at offset 4,
    /// a symbol table naming it `answer`, and its string table.
    fn tiny_elf() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        let data_off = b.len();
        b.extend_from_slice(&[0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12]);
        let str_off = b.len();
        b.extend_from_slice(b"\0answer\0");
        let sym_off = b.len();
        b.extend_from_slice(&[0u8; 24]); // the null symbol
        let mut sym = vec![0u8; 24];
        sym[0..4].copy_from_slice(&1u32.to_le_bytes());
        sym[6..8].copy_from_slice(&1u16.to_le_bytes());
        sym[8..16].copy_from_slice(&4u64.to_le_bytes());
        b.extend_from_slice(&sym);
        let shoff = b.len();
        let header = |kind: u32, off: usize, size: usize, link: u32| {
            let mut h = vec![0u8; 64];
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[24..32].copy_from_slice(&(off as u64).to_le_bytes());
            h[32..40].copy_from_slice(&(size as u64).to_le_bytes());
            h[40..44].copy_from_slice(&link.to_le_bytes());
            h
        };
        b.extend(header(0, 0, 0, 0));
        b.extend(header(1, data_off, 8, 0));
        b.extend(header(3, str_off, 8, 0));
        b.extend(header(2, sym_off, 48, 2));
        b[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        b[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        b[0x3C..0x3E].copy_from_slice(&4u16.to_le_bytes());
        b
    }

    #[test]
    fn reads_a_symbol_and_refuses_garbage() {
        let elf = tiny_elf();
        assert_eq!(read_u32_symbol(&elf, "answer"), Some(0x1234_5678));
        assert_eq!(read_u32_symbol(&elf, "question"), None);
        assert_eq!(read_u32_symbol(b"not an elf", "answer"), None);
        // Cut inside the header, the data, and the symbol table's section header.
        for cut in [0, 10, 70, elf.len() - 30] {
            assert_eq!(read_u32_symbol(&elf[..cut], "answer"), None);
        }
    }
}
