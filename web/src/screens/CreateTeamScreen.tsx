import { useState } from 'preact/hooks';
import { createTeam } from '../api/endpoints';
import { Banner } from '../components/Banner';
import { Field } from '../components/Field';
import { PageHeader } from '../components/PageHeader';
import { formErrors, type FormErrors } from '../error-messages';
import { navigate } from '../router';
import { useSession } from '../session-context';

export function CreateTeamScreen() {
  const session = useSession();
  const [name, setName] = useState('');
  const [errors, setErrors] = useState<FormErrors<'name'>>({ fields: {}, banner: null });
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    if (!name.trim()) {
      setErrors({ fields: { name: 'Name the team.' }, banner: null });
      return;
    }
    setBusy(true);
    setErrors({ fields: {}, banner: null });
    try {
      const team = await createTeam(name.trim());
      await session.reloadTeams();
      navigate({ name: 'team', teamId: team.id, section: 'start' });
    } catch (error) {
      setErrors(formErrors(error, ['name']));
      setBusy(false);
    }
  }

  return (
    <>
      <PageHeader title="Create team" subtitle="You will be its owner and can invite others." />
      <section class="card card-narrow">
        <form class="card-body form" onSubmit={submit} noValidate>
          {errors.banner ? <Banner tone="error">{errors.banner}</Banner> : null}
          <Field id="team-name" label="Team name" value={name} onValue={(value) => {
              setName(value);
              setErrors((old) => ({ ...old, fields: {} }));
            }} error={errors.fields.name} maxLength={60} autoFocus />
          <div class="form-actions">
            <button type="submit" class="btn btn-primary" disabled={busy}>
              {busy ? 'Creating…' : 'Create team'}
            </button>
          </div>
        </form>
      </section>
    </>
  );
}
