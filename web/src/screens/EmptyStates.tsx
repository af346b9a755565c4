import { Link } from '../components/Link';
import { describeCode } from '../error-messages';
import { PageHeader } from '../components/PageHeader';
import { routePath } from '../router';

/** Signed in, but in no team yet. */
export function NoTeamScreen() {
  return (
    <>
      <PageHeader title="Welcome to Crewhost" />
      <section class="card">
        <div class="card-body empty-state">
          <h2>You are not in a team yet</h2>
          <p class="muted">
            Teams share hosts and agents. Create one and invite your crew, or open an invitation link someone sent
            you.
          </p>
          <Link class="btn btn-primary" href={routePath({ name: 'createTeam' })}>
            Create a team
          </Link>
        </div>
      </section>
    </>
  );
}

/** A team address for a team you are not (or no longer) in. */
export function TeamMissingScreen() {
  return (
    <>
      <PageHeader title="Team not found" />
      <section class="card">
        <div class="card-body empty-state">
          <p class="muted">This team does not exist, or you are no longer a member.</p>
          <Link class="btn btn-secondary" href={routePath({ name: 'home' })}>
            Go to your teams
          </Link>
        </div>
      </section>
    </>
  );
}

/** A team page of a team the account was just removed from, said in the team's name. */
export function RemovedFromTeamScreen({ teamName }: { teamName: string }) {
  return (
    <>
      <PageHeader title={`You were removed from ${teamName}`} />
      <section class="card">
        <div class="card-body empty-state" role="status">
          <p class="muted">{describeCode('removedFromTeam', 'host')}</p>
          <Link class="btn btn-secondary" href={routePath({ name: 'home' })}>
            Go to your teams
          </Link>
        </div>
      </section>
    </>
  );
}
