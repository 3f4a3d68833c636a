import { describe, expect, it } from "vitest";
import { ApiError } from "./api-error";
import { ListLoad } from "./list-load.svelte";

function deferred<T>() {
  let resolve: (v: T) => void = () => {};
  let reject: (e: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("ListLoad", () => {
  it("is loading while the request runs, then loaded with the answer applied", async () => {
    const list = new ListLoad();
    const answer = deferred<string[]>();
    let rows: string[] = [];
    const done = list.run(() => answer.promise, (res) => (rows = res));
    expect(list.loading).toBe(true);
    expect(list.loaded).toBe(false);
    answer.resolve(["a"]);
    await done;
    expect(rows).toEqual(["a"]);
    expect(list).toMatchObject({ loading: false, loaded: true, error: null });
  });

  it("ignores an earlier request that answers after a later one", async () => {
    const list = new ListLoad();
    const slow = deferred<string>();
    const fast = deferred<string>();
    const applied: string[] = [];
    const first = list.run(() => slow.promise, (res) => applied.push(res));
    const second = list.run(() => fast.promise, (res) => applied.push(res));
    fast.resolve("new");
    await second;
    slow.reject(new ApiError("internal", "too late"));
    await first;
    expect(applied).toEqual(["new"]);
    expect(list).toMatchObject({ loading: false, loaded: true, error: null });
  });

  it("keeps the rows it had on a failure and says why; reset forgets both", async () => {
    const list = new ListLoad();
    await list.run(async () => 1, () => {});
    await list.run(async () => Promise.reject(new ApiError("memory_off", "Memory is off")), () => {});
    expect(list.loaded).toBe(true);
    expect(list.loading).toBe(false);
    expect(list.error?.code).toBe("memory_off");
    list.reset();
    expect(list).toMatchObject({ loaded: false, error: null });
  });
});
