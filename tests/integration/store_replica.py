"""A cache-store replica in its own process, driven by JSON lines on stdin (for persistence and
two-replica tests). Each command prints one JSON line."""
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from gateway.index import SearchFilter
from gateway.store import NewEntry, StoreConfig, open_store


def main() -> None:
    db, redis_url, data_dir = sys.argv[1], sys.argv[2] or None, Path(sys.argv[3])
    store = open_store(db, redis_url, data_dir, StoreConfig(ready_delay_s=0.0, dim=8), migrate=True)
    print(json.dumps({"ok": True, "indexed": len(store.index)}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        if op == "write":
            cid = store.write(NewEntry(tenant=cmd["tenant"], session_id=cmd["session"],
                                       vector=np.asarray(cmd["vector"], np.float32),
                                       tags={"intent_domain": "travel_planning"}, answer_text=cmd["answer"],
                                       system_prompt_version="v1", context_fingerprint="fp", state="ready"))
            out = {"cache_id": cid}
        elif op == "wait_found":
            deadline = time.monotonic() + cmd.get("timeout", 1.0)
            where = SearchFilter(cmd["tenant"], cmd["session"], "travel_planning", "v1")
            found, started = False, time.monotonic()
            while time.monotonic() < deadline:
                ids = [e["cache_id"] for e, _ in store.search(np.asarray(cmd["vector"], np.float32), where, 5)]
                if (cmd["cache_id"] in ids) == cmd.get("present", True):
                    found = True
                    break
                time.sleep(0.01)
            out = {"ok": found, "after_s": time.monotonic() - started, "indexed": len(store.index)}
        elif op == "invalidate":
            out = {"count": store.invalidate(cache_id=cmd["cache_id"])}
        elif op == "checkpoint":
            store.checkpoint()
            out = {"ok": True}
        elif op == "crash":
            os._exit(0)                       # no checkpoint, no cleanup
        else:
            store.close()
            print(json.dumps({"ok": True}), flush=True)
            return
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
