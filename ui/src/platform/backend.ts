import type { Methods } from "../generated";

/** The one interface the UI uses to talk to the Cairn service, whatever the host. */
export interface Backend {
  call<M extends keyof Methods>(method: M, req: Methods[M]["req"]): Promise<Methods[M]["res"]>;
}
