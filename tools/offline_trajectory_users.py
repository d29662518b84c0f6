#!/usr/bin/env python3
"""Makes every episode of a dprl/Minari dataset folder its own privacy unit (trajectory level).

`dprl collect --user-id K` writes one user id for all episodes it collects. For user-level DP-SGD
at trajectory level each episode must be its own user: this script deletes the per-episode
`user_id` attributes of DIR/data/main_data.hdf5 (dprl's reader then uses the episode index as the
user, as it documents) and records {"privacy_unit": "trajectory"} in the "dprl" metadata of
DIR/data/metadata.json, which the offline learners copy into their guarantee record. Needs h5py
(Debian: python3-h5py).

    /usr/bin/python3 tools/offline_trajectory_users.py runs/data/cartpole_ppo_500
"""

import argparse
import json
import os

import h5py


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", help="dataset folder written by dprl collect")
    args = ap.parse_args()
    data = os.path.join(args.dataset, "data")
    with h5py.File(os.path.join(data, "main_data.hdf5"), "r+") as f:
        for name in f:
            if "user_id" in f[name].attrs:
                del f[name].attrs["user_id"]
    meta_path = os.path.join(data, "metadata.json")
    with open(meta_path) as fh:
        meta = json.load(fh)
    meta.setdefault("dprl", {}).setdefault("metadata", {})["privacy_unit"] = "trajectory"
    tmp = meta_path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(meta, fh)
    os.replace(tmp, meta_path)


if __name__ == "__main__":
    main()
