import type { ReactElement } from "react";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { I18nextProvider } from "react-i18next";
import i18n from "i18next";
import common from "../locales/en/common.json";
import tasks from "../locales/en/tasks.json";
import settings from "../locales/en/settings.json";
import notifications from "../locales/en/notifications.json";

// Tests render in English with real translation files, so assertions read
// like what users see and a missing key shows up as a failing test.
void i18n.init({
  lng: "en",
  resources: { en: { common, tasks, settings, notifications } },
  interpolation: { escapeValue: false },
});

export function withProviders(ui: ReactElement): ReactElement {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return (
    <QueryClientProvider client={queryClient}>
      <I18nextProvider i18n={i18n}>{ui}</I18nextProvider>
    </QueryClientProvider>
  );
}
