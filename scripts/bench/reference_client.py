"""The reference client for the client-overhead figure in `npm run bench`.

A plain Python streaming client, one thread per request, standard library only: it posts a
streamed chat completion, reads the server-sent events line by line and parses each, and
reports client overhead as the time to the event carrying finish_reason minus the server's own
prompt_ms + predicted_ms (from the event carrying `timings`): the rule Infer Lab's client uses.

    python3 scripts/bench/reference_client.py BASE_URL HEADERS_JSON BODY_JSON

Sends one request for each line read on stdin, so the caller can alternate it request by request
with another client, and prints that request's overhead in ms on a line of its own: null where
the stream had no finish or no timings. Ends at the end of stdin.
"""

import http.client
import json
import sys
import threading
import time
import urllib.parse


def one_request(base_url, headers, payload, results):
    address = urllib.parse.urlsplit(base_url)
    started = time.perf_counter()
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=120)
    try:
        connection.request("POST", "/v1/chat/completions", body=payload, headers={**headers, "Content-Type": "application/json"})
        response = connection.getresponse()
        timings = None
        finished = None
        for line in response:
            if not line.startswith(b"data: {"):
                continue
            event = json.loads(line[6:])
            if finished is None and any(choice.get("finish_reason") for choice in event.get("choices") or []):
                finished = time.perf_counter()
            if "timings" in event:
                timings = event["timings"]
    finally:
        connection.close()
    if timings is None or finished is None:
        results.append(None)
    else:
        results.append((finished - started) * 1000 - (timings["prompt_ms"] + timings["predicted_ms"]))


def main():
    base_url, headers_json, body_json = sys.argv[1:4]
    headers = json.loads(headers_json)
    payload = json.dumps({**json.loads(body_json), "stream": True}).encode()
    for _ in sys.stdin:
        results = []
        worker = threading.Thread(target=one_request, args=(base_url, headers, payload, results))
        worker.start()
        worker.join()
        print(json.dumps(results[0] if results else None), flush=True)


if __name__ == "__main__":
    main()
