// Only VITE_-prefixed variables reach the browser bundle.
export const config = {
  apiUrl: import.meta.env.VITE_API_URL ?? "/api",
  wsUrl: import.meta.env.VITE_WS_URL ?? `${location.origin.replace(/^http/, "ws")}/api/ws`,
  posthogKey: import.meta.env.VITE_POSTHOG_KEY as string | undefined,
  posthogHost: import.meta.env.VITE_POSTHOG_HOST ?? "https://eu.i.posthog.com",
  growthbookClientKey: import.meta.env.VITE_GROWTHBOOK_CLIENT_KEY as string | undefined,
  sentryDsn: import.meta.env.VITE_SENTRY_DSN as string | undefined,
};
