//! Builds rein's native helper for warm node hooks (`src/hooks/warm_boot/node_serve.c`) with
//! the C compiler Rust links with. The helper is a shared object node loads; rein embeds its
//! bytes and writes them next to the start hook. Without a C compiler rein still builds: node
//! hooks then run cold and say why.
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let source = "src/hooks/warm_boot/node_serve.c";
    println!("cargo:rerun-if-changed={source}");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo::rustc-check-cfg=cfg(rein_node_helper)");
    let out =
        PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("node_serve.node");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o"])
        .arg(&out)
        .arg(source)
        .status();
    match built {
        Ok(status) if status.success() => println!("cargo:rustc-cfg=rein_node_helper"),
        Ok(status) => println!(
            "cargo:warning=building {source} with {cc} failed ({status}); warm node hooks run cold"
        ),
        Err(e) => println!("cargo:warning=no C compiler ({cc}: {e}); warm node hooks run cold"),
    }
}
