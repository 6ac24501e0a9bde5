import { useTranslation } from "react-i18next";
import { Controller, useForm } from "react-hook-form";
import { zodResolver } from "@hookform/resolvers/zod";
import { z } from "zod";
import { createTaskBody, type TaskDetail } from "@tandem/shared/schemas/task";
import { useTask } from "../api/queries/useTask";
import { useUpdateTask } from "../api/queries/useUpdateTask";
import { useCan } from "../hooks/useCan";
import { formatDateTime } from "../lib/format";
import { Button } from "./ui/Button";
import { Field, inputClass } from "./ui/form";
import { QueryError } from "./ui/QueryError";
import { Skeleton } from "./ui/Skeleton";
import { DueDatePicker } from "./DueDatePicker";
import { RichTextEditor } from "./RichTextEditor";

const detailsForm = createTaskBody.pick({ title: true, dueAt: true });
type DetailsForm = z.infer<typeof detailsForm>;

interface TaskDetailsPanelProps {
  taskId: string;
  workspaceId: string;
  onClose: () => void;
}

export function TaskDetailsPanel({ taskId, workspaceId, onClose }: TaskDetailsPanelProps) {
  const { t } = useTranslation("tasks");
  const { task, isLoading, error } = useTask(taskId);

  if (isLoading) return <Skeleton className="h-64 w-full" />;
  if (error || !task) return <QueryError error={error} />;

  return (
    <aside aria-labelledby="task-details-title" className="flex h-full flex-col gap-4 border-l border-subtle bg-surface p-4">
      <header className="flex items-start justify-between gap-2">
        <h2 id="task-details-title" className="text-lg font-semibold text-fg">
          {t("details.title")}
        </h2>
        <Button variant="ghost" size="sm" onClick={onClose}>
          {t("details.close")}
        </Button>
      </header>
      <DetailsForm task={task} workspaceId={workspaceId} />
      <p className="text-xs text-muted">{t("details.createdAt", { date: formatDateTime(task.createdAt) })}</p>
    </aside>
  );
}

function DetailsForm({ task, workspaceId }: { task: TaskDetail; workspaceId: string }) {
  const { t } = useTranslation("tasks");
  const updateTask = useUpdateTask(task.id);
  const canEdit = useCan("task:update", { workspaceId, projectId: task.projectId });
  const { register, control, handleSubmit, formState } = useForm<DetailsForm>({
    resolver: zodResolver(detailsForm),
    values: { title: task.title, dueAt: task.dueAt },
  });

  return (
    <form onSubmit={handleSubmit((values) => updateTask.mutateAsync(values))} className="flex flex-col gap-4">
      <Field label={t("details.fields.title")} error={formState.errors.title && t("details.errors.title")}>
        <input className={inputClass} disabled={!canEdit} {...register("title")} />
      </Field>
      <Field label={t("details.fields.dueAt")}>
        <Controller
          control={control}
          name="dueAt"
          render={({ field }) => <DueDatePicker value={field.value ?? null} onChange={field.onChange} disabled={!canEdit} />}
        />
      </Field>
      <RichTextEditor taskId={task.id} value={task.description} readOnly={!canEdit} />
      {canEdit && (
        <Button
          type="submit"
          data-testid="task-details-save"
          disabled={formState.isSubmitting || !formState.isDirty}
          className="self-end"
        >
          {t("details.save")}
        </Button>
      )}
    </form>
  );
}
