//! The `skyplan` binary: the CLI (`cli`), the provider registry and the embedded
//! simulators' wiring; `main` hands over to `cli::main`.

/// mimalloc instead of glibc's malloc: a plan of thousands of load balancers allocates and
/// frees millions of small objects from the runtime's threads at once, and glibc's arenas
/// spent that time in lock contention (futex) and consolidation (issue 9's profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cli;
mod embedded;
mod registry;
#[cfg(test)]
mod user_agent_tests;

// The pipeline's modules, under the names the binary's modules use for them.
use skyplan_core::{
    apply, config, graph, invocation, model, plan, provider, render, state, workspace,
};

fn main() {
    disable_transparent_huge_pages();
    let code = cli::main();
    exit_without_freeing(code)
}

/// Ends the process once the command is done: its files are written and closed, its locks
/// released, the runtime shut down. What `exit` would still do is free the heap for the system
/// to take back anyway — mimalloc's exit-time collection of a 5,000 load-balancer plan was
/// 16 ms of madvise — so only the standard streams are flushed.
fn exit_without_freeing(code: u8) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(unix)]
    // SAFETY: _exit takes a plain integer; every buffer skyplan writes through is flushed
    // above or was dropped (and flushed) when the command returned.
    unsafe {
        libc::_exit(code.into())
    }
    #[cfg(not(unix))]
    std::process::exit(code.into())
}

/// mimalloc asks for transparent huge pages; the kernel then zeroes 2 MiB at each first touch.
/// A plan of 5,000 load balancers spent a third of its time there (clear_page_erms under
/// do_huge_pmd_anonymous_page), twice its system time and more wall time than it saved.
/// Small pages are zeroed only as far as they are used.
fn disable_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integers and touches no memory of
    // ours; a failure (an old kernel) only leaves huge pages enabled.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
