/* Preloaded by scripts/sanitize.sh integration: dlclose() does nothing, so that the shared
   objects a run loads and unloads (Open MPI's components, the DISTSPEC plugin, which LAMMPS
   unloads at exit) stay mapped until LeakSanitizer reports. Otherwise their leaks show as
   "<unknown module>" frames, which neither tell whose leak it is nor match a suppression. */
int dlclose(void *handle)
{
  (void) handle;
  return 0;
}
