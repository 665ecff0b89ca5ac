//! Stop-gap until `loam simulate RUN_DIR --backend dem-cpu --bed BED` exists: replays a solved
//! run's z_d(t) (results/<run>/trajectory.csv, linear between nodes, u = the slope) on a DEM
//! bed checkpoint with the paper's robot and a 7.6 cm foot, prints the apex rise and writes
//! the bodies CSV.
//!
//! cargo run --release --example dem_replay -- RUN_DIR BED [dt=1e-3] [OUT.csv] [iterations=100] [t_max=1]
use loam::model::hopper::Hopper;
use loam::sim::dem::hopper::{bodies_csv, replay_hopper, HopperReplaySettings};
use loam::sim::dem::{bed::Checkpoint, CpuBackend};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(format!("{}/trajectory.csv", a[1])).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (it, iz) = (column("t"), column("z_d"));
    let mut nodes: Vec<(f64, f64)> = Vec::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (t, z): (f64, f64) = (f[it].parse().unwrap(), f[iz].parse().unwrap());
        // Phase boundaries repeat a node time: keep the first.
        if nodes.last().is_none_or(|n| t > n.0) {
            nodes.push((t, z));
        }
    }
    let command = move |t: f64| -> (f64, f64) {
        if t <= nodes[0].0 {
            return (nodes[0].1, 0.0);
        }
        for w in nodes.windows(2) {
            if t <= w[1].0 {
                let slope = (w[1].1 - w[0].1) / (w[1].0 - w[0].0);
                return (w[0].1 + slope * (t - w[0].0), slope);
            }
        }
        (nodes.last().unwrap().1, 0.0)
    };
    let bed = Checkpoint::load(std::path::Path::new(&a[2])).unwrap();
    let arg = |k: usize| a.get(k).map(|s| s.parse::<f64>().unwrap());
    let robot = Hopper {
        motor_mass: 0.948,
        rod_mass: 0.165,
        foot_mass: 0.044,
        spring_stiffness: 2730.0,
        spring_damping: 2.0,
        spring_rest_length: 0.060,
        force_constant: 3.81,
        position_gain: 100.0,
        velocity_feedforward: 1.0,
        velocity_gain: 10.0,
        integral_gain: 40.0,
        gravity: 9.81,
    };
    let settings = HopperReplaySettings {
        t_max: arg(6).unwrap_or(1.0),
        time_step: Some(arg(3).unwrap_or(1e-3)),
        iterations: Some(arg(5).unwrap_or(100.0) as usize),
        ..Default::default()
    };
    let start = std::time::Instant::now();
    let z0 = command(0.0).0;
    let r = replay_hopper(&mut CpuBackend::new(), &bed, &robot, 0.038, &command, z0, &settings)
        .unwrap();
    println!(
        "apex rise {:.4} m (reached {}), takeoff {:?}, apex {:?}, rest depth {:.4} m, \
         rest bed force {:.3} N, wall {:.1} s",
        r.apex_rise,
        r.reached_apex,
        r.takeoff_time,
        r.apex_time,
        r.rest_depth,
        r.rest_bed_force,
        start.elapsed().as_secs_f64()
    );
    if let Some(out) = a.get(4) {
        std::fs::write(out, bodies_csv(&r)).unwrap();
    }
}
