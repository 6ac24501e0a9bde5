import posthog from "posthog-js";
import type { EventName, EventProps } from "@tandem/shared/events";
import { config } from "../config";
import { hasConsent } from "./consent";

let started = false;

function ensureStarted(): boolean {
  if (!hasConsent("analytics") || !config.posthogKey) return false;
  if (!started) {
    posthog.init(config.posthogKey, { api_host: config.posthogHost, autocapture: false, persistence: "memory" });
    started = true;
  }
  return true;
}

/** Records a product event; a no-op without analytics consent. Ids only in props. */
export function track<N extends EventName>(name: N, props: EventProps[N]): void {
  if (!ensureStarted()) return;
  posthog.capture(name, props);
}

export function identify(userId: string, workspaceId: string): void {
  if (!ensureStarted()) return;
  posthog.identify(userId);
  posthog.group("workspace", workspaceId);
}
