import { useTranslation } from "react-i18next";
import { Controller, useForm } from "react-hook-form";
import { zodResolver } from "@hookform/resolvers/zod";
import { notificationTypes, type NotificationType } from "@tandem/shared/notifications";
import { notificationSettings, type NotificationSettings } from "@tandem/shared/schemas/settings";
import { useNotificationSettings, useUpdateNotificationSettings } from "../../api/queries/useNotificationSettings";
import { usePageTitle } from "../../hooks/usePageTitle";
import { Button } from "../../components/ui/Button";
import { QueryError } from "../../components/ui/QueryError";
import { SkeletonList } from "../../components/ui/Skeleton";
import { Switch } from "../../components/ui/Switch";
import { Field, inputClass } from "../../components/ui/form";

export function NotificationsPage() {
  const { t } = useTranslation("settings");
  usePageTitle(t("notifications.pageTitle"));
  const { settings, isLoading, error, refetch } = useNotificationSettings();

  return (
    <main className="mx-auto flex w-full max-w-2xl flex-col gap-6 p-6">
      <header>
        <h1 className="text-xl font-semibold text-fg">{t("notifications.heading")}</h1>
        <p className="text-sm text-muted">{t("notifications.intro")}</p>
      </header>
      {isLoading && <SkeletonList rows={5} />}
      {error && <QueryError error={error} onRetry={() => void refetch()} />}
      {settings && <PreferencesForm settings={settings} />}
    </main>
  );
}

function PreferencesForm({ settings }: { settings: NotificationSettings }) {
  const { t } = useTranslation("settings");
  const update = useUpdateNotificationSettings();
  const { control, register, handleSubmit, formState, reset, watch, setValue } = useForm<NotificationSettings>({
    resolver: zodResolver(notificationSettings),
    defaultValues: settings,
  });

  const onSubmit = handleSubmit(async (values) => {
    const saved = await update.mutateAsync(values);
    reset(saved);
  });

  return (
    <form onSubmit={onSubmit} className="flex flex-col gap-4">
      <table className="w-full text-sm">
        <thead>
          <tr className="text-left text-muted">
            <th scope="col" className="py-2 font-medium">{t("notifications.columns.type")}</th>
            <th scope="col" className="py-2 font-medium">{t("notifications.columns.inApp")}</th>
            <th scope="col" className="py-2 font-medium">{t("notifications.columns.email")}</th>
          </tr>
        </thead>
        <tbody>
          {notificationTypes.map((type: NotificationType) => (
            <tr key={type} className="border-t border-subtle">
              <th scope="row" className="py-3 text-left font-normal text-fg">
                {t(`notifications.types.${type}`)}
              </th>
              {(["inApp", "email"] as const).map((channel) => (
                <td key={channel} className="py-3">
                  <Controller
                    control={control}
                    name={`preferences.${type}.${channel}`}
                    render={({ field }) => (
                      <Switch
                        checked={field.value}
                        onCheckedChange={field.onChange}
                        aria-label={t(`notifications.toggle.${channel}`, { type: t(`notifications.types.${type}`) })}
                      />
                    )}
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <fieldset className="flex flex-col gap-3 rounded-card border border-subtle p-4">
        <legend className="px-1 text-sm font-medium text-fg">{t("notifications.quietHours.legend")}</legend>
        <label className="flex items-center gap-2 text-sm text-fg">
          <Switch
            checked={watch("quietHours") !== null}
            onCheckedChange={(on) =>
              setValue("quietHours", on ? { start: "22:00", end: "07:00" } : null, { shouldDirty: true })
            }
          />
          {t("notifications.quietHours.enable")}
        </label>
        {watch("quietHours") !== null && (
          <div className="grid grid-cols-2 gap-3">
            <Field label={t("notifications.quietHours.start")} error={formState.errors.quietHours?.start && t("notifications.quietHours.invalid")}>
              <input type="time" className={inputClass} {...register("quietHours.start")} />
            </Field>
            <Field label={t("notifications.quietHours.end")} error={formState.errors.quietHours?.end && t("notifications.quietHours.invalid")}>
              <input type="time" className={inputClass} {...register("quietHours.end")} />
            </Field>
          </div>
        )}
      </fieldset>

      <Button type="submit" className="self-end" disabled={formState.isSubmitting || !formState.isDirty}>
        {t("notifications.save")}
      </Button>
    </form>
  );
}
