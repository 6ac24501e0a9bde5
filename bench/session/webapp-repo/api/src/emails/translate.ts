import i18next, { type TFunction } from "i18next";
import resourcesToBackend from "i18next-resources-to-backend";

// Emails use the same locale files as the web app so wording stays in one place.
const instance = i18next.createInstance();
const ready = instance
  .use(resourcesToBackend((lng: string, ns: string) => import(`../../../web/src/locales/${lng}/${ns}.json`)))
  .init({ fallbackLng: "en", supportedLngs: ["en", "de", "fr"], ns: ["emails"], interpolation: { escapeValue: false } });

export async function translator(locale: string, ns: string): Promise<TFunction> {
  await ready;
  await instance.loadNamespaces(ns);
  return instance.getFixedT(locale, ns);
}
