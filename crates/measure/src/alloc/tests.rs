use super::*;

// The library's test binary installs `CountingJemalloc` (see lib.rs).

#[test]
fn counts_an_allocation_and_its_free() {
    // Live bytes are this thread's allocations less its frees, read clamped at zero; a
    // test thread that freed a block another thread made (the harness's copy of its name)
    // starts below zero. A block held through the test keeps the reading above it.
    let _held = std::hint::black_box(vec![0u8; 1 << 16]);
    let before = counters();
    let block = std::hint::black_box(vec![0u8; 4096]);
    let during = counters();
    drop(block);
    let after = counters();
    assert_eq!(during.allocs - before.allocs, 1);
    assert_eq!(during.alloc_bytes - before.alloc_bytes, 4096);
    assert_eq!(during.live_bytes - before.live_bytes, 4096);
    assert_eq!(after.deallocs - during.deallocs, 1);
    assert_eq!(after.live_bytes, before.live_bytes);
}

#[test]
fn peak_remembers_the_high_point_until_reset() {
    reset_peak();
    let base = counters().live_bytes;
    drop(std::hint::black_box(vec![1u8; 1 << 20]));
    let c = counters();
    assert!(c.peak_live_bytes >= base + (1 << 20));
    reset_peak();
    assert_eq!(counters().peak_live_bytes, counters().live_bytes);
}

#[test]
fn realloc_growth_counts_as_allocated_bytes() {
    let mut v: Vec<u8> = Vec::with_capacity(16);
    let before = counters();
    v.reserve_exact(1024);
    let after = counters();
    assert_eq!(after.reallocs - before.reallocs, 1);
    assert_eq!(
        after.alloc_bytes - before.alloc_bytes,
        1024 + v.len() as u64 - 16
    );
    assert_eq!(after.live_bytes - before.live_bytes, 1024 - 16);
    drop(std::hint::black_box(v));
}

/// The monotone counters, of the total and summed over the components.
fn monotone() -> ([u64; 4], [u64; 4]) {
    let of = |c: AllocCounters| [c.allocs, c.deallocs, c.reallocs, c.alloc_bytes];
    let sum = Component::ALL.iter().fold([0; 4], |acc, &c| {
        let c = of(component_counters(c));
        [acc[0] + c[0], acc[1] + c[1], acc[2] + c[2], acc[3] + c[3]]
    });
    (of(counters()), sum)
}

#[test]
fn a_block_stays_its_allocators_whoever_frees_or_grows_it() {
    let informer = || component_counters(Component::Informer);
    let harness = || component_counters(Component::Harness);
    let (i0, h0) = (informer(), harness());
    let mut block = {
        let _informer = enter(Component::Informer);
        std::hint::black_box(Vec::<u8>::with_capacity(1000))
    };
    assert_eq!(
        current(),
        Component::Harness,
        "the guard restored the harness"
    );
    assert_eq!(informer().allocs - i0.allocs, 1);
    assert_eq!(informer().live_bytes - i0.live_bytes, 1000);
    // The harness grows it: still the informer's block.
    block.reserve_exact(3000);
    assert_eq!(informer().reallocs - i0.reallocs, 1);
    assert_eq!(informer().live_bytes - i0.live_bytes, 3000);
    // The harness frees it: the informer's live bytes fall, the harness's do not.
    drop(block);
    assert_eq!(informer().live_bytes, i0.live_bytes);
    assert_eq!(informer().deallocs - i0.deallocs, 1);
    assert_eq!(harness().deallocs, h0.deallocs);
}

#[test]
fn an_explicit_arena_keeps_its_large_and_aligned_blocks_in_its_region() {
    let apiserver = || component_counters(Component::ApiServer);
    let before = apiserver();
    let (mut large, aligned) = {
        let _apiserver = enter(Component::ApiServer);
        let large = std::hint::black_box(Vec::<u8>::with_capacity(8 << 20));
        let layout = Layout::from_size_align(4096, 4096).unwrap();
        // SAFETY: a non-zero size; freed below with the same layout.
        let aligned = unsafe { std::alloc::alloc(layout) };
        assert!(!aligned.is_null());
        (large, (aligned, layout))
    };
    let region = |ptr| {
        reservation()
            .and_then(|r| region_of(ptr, r))
            .map(|r| EXPLICIT[r])
    };
    assert_eq!(region(large.as_mut_ptr()), Some(Component::ApiServer));
    assert_eq!(region(aligned.0), Some(Component::ApiServer));
    assert!(!is_automatic(large.as_mut_ptr()));
    // The harness grows the large block past its extent and frees both.
    large.reserve_exact(64 << 20);
    assert_eq!(region(large.as_mut_ptr()), Some(Component::ApiServer));
    let held = apiserver().live_bytes - before.live_bytes;
    assert_eq!(held, (64 << 20) + 4096);
    drop(large);
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(aligned.0, aligned.1) };
    assert_eq!(apiserver().live_bytes, before.live_bytes);
    // The informer's blocks are outside every region.
    let mut informer = {
        let _informer = enter(Component::Informer);
        std::hint::black_box(vec![0u8; 100])
    };
    assert!(is_automatic(informer.as_mut_ptr()));
}

#[test]
fn components_add_up_to_the_totals() {
    // Many blocks across components, freed in another order by another component: the
    // owner table grows past its first size and deletes from the middle of runs.
    let (total0, sum0) = monotone();
    let live0 = Component::ALL.map(|c| component_counters(c).live_bytes);
    let mut blocks = Vec::new();
    for i in 0..200_000usize {
        let _entered = enter(Component::ALL[i % 3]);
        blocks.push(std::hint::black_box(vec![0u8; 8 + i % 200]));
    }
    {
        let _apiserver = enter(Component::ApiServer);
        let mut i = 0;
        blocks.retain(|_| {
            i += 1;
            i % 7 != 0
        });
        for block in blocks.iter_mut().step_by(5) {
            block.reserve_exact(64);
        }
    }
    drop(blocks);
    let (total1, sum1) = monotone();
    for k in 0..4 {
        assert_eq!(total1[k] - total0[k], sum1[k] - sum0[k], "counter {k}");
    }
    assert!(total1[0] - total0[0] >= 200_000);
    // Every block went back: the informer and apiserver hold what they held before.
    let live1 = Component::ALL.map(|c| component_counters(c).live_bytes);
    assert_eq!(live1[0], live0[0], "informer");
    assert_eq!(live1[1], live0[1], "apiserver");
}
