"""Writes the key frames of quadruped_trot.yaml: diagonal pairs take turns to lift their feet.

Run from this folder: python3 make_quadruped_trot.py > /tmp/frames.txt, and paste them under
control.track.reference.
"""

STAND = {"hip": 0.5, "knee": -1.0}  # the standing posture [rad]
LIFT = {"hip": 0.8, "knee": -1.6}  # the foot 11 cm up, still below the hip [rad]
PAIRS = [["front_left", "hind_right"], ["front_right", "hind_left"]]
LEGS = ["front_left", "front_right", "hind_left", "hind_right"]

t = 0.5
frames = [(t, {})]
for stride in range(6):
    up = PAIRS[stride % 2]
    frames += [(t + 0.1, {leg: LIFT for leg in up}), (t + 0.2, {}), (t + 0.3, {})]
    t += 0.3
for time, lifted in frames:
    cells = [f"t: {time:.1f}"]
    for leg in LEGS:
        angles = lifted.get(leg, STAND)
        cells += [f"hip_{leg}: {angles['hip']}", f"knee_{leg}: {angles['knee']}"]
    print("      - {" + ", ".join(cells) + "}")
print(f"# duration: {t + 0.3:.1f}")
