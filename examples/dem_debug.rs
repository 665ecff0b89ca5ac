use loam::sim::dem::{bed, Backend, CpuBackend, Scene};
fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10);
    let alpha: f64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(0.2);
    let scene = Scene::parse(&format!(
            "container: {{ shape: box, half_x: 0.02, half_y: 0.02 }}\n\
             grains: {{ radius: 0.002, size_spread: 0.1, density: 1000, friction: 0.5, count: 300, seed: 3 }}\n\
             solver: {{ iterations: {iters}, stabilisation: {alpha} }}\n\
             settle: {{ kinetic_energy: 1.0e-11, max_time: 0.05 }}\n"), std::path::Path::new("x")).unwrap();
    let mut backend = CpuBackend::new();
    let b = bed::prepare(&mut backend, &scene).unwrap();
    println!("{:?}", b.info);
    for k in 0..40 {
        backend.step(50).unwrap();
        let g = backend.grains().unwrap();
        let (mut vmax, mut imax) = (0.0, 0);
        for (i, v) in g.velocity.iter().enumerate() {
            let s = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if s > vmax {
                vmax = s;
                imax = i;
            }
        }
        let zmax = g.position.iter().map(|x| x[2]).fold(0.0, f64::max);
        println!(
            "t={:.2} ke/grain={:.3e} vmax={:.3e} (grain {} at {:?}) zmax={:.4}",
            0.05 + (k + 1) as f64 * 0.05,
            g.kinetic_energy() / 300.0,
            vmax,
            imax,
            g.position[imax],
            zmax
        );
    }
}
