/// mimalloc instead of glibc's malloc: a plan of thousands of load balancers allocates and
/// frees millions of small objects from the runtime's threads at once, and glibc's arenas
/// spent that time in lock contention (futex) and consolidation (issue 9's profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    skyplan::cli::main()
}
